import Foundation
import Logging

extension UnicacheConfiguration {
    /// The start-up line's: the version, each domain's source (`demo`, `none`, or the upstream's scheme, host and port,
    /// never its credentials) and the `--upstream-path` templates.
    public var sourcesMetadata: Logger.Metadata {
        var sources: Logger.Metadata = [:]
        for domain in UpstreamDomain.allCases { sources[domain.rawValue] = .string(upstreams.source(for: domain).description) }
        var metadata: Logger.Metadata = ["version": .string(UnicacheVersion.current), "upstreams": .dictionary(sources)]
        if !upstreams.paths.isEmpty { metadata["upstream-paths"] = .dictionary(upstreams.paths.mapValues { .string($0.text) }) }
        return metadata
    }

    /// What a start-up log line may show: no token (only whether one is set), no credentials of upstream URLs.
    public var logMetadata: Logger.Metadata {
        var upstreamMetadata: Logger.Metadata = [:]
        for domain in UpstreamDomain.allCases {
            // CONTRACT §11.1: demo, the upstream's scheme, host and port (never its credentials), or none.
            upstreamMetadata[domain.rawValue] = .string(upstreams.source(for: domain).description)
        }
        // Budgets, caps and the names of service headers; their values never.
        var protectionMetadata: Logger.Metadata = [:]
        for (domain, protection) in upstreams.protection {
            var fields: Logger.Metadata = ["concurrency": .stringConvertible(protection.concurrency)]
            if !protection.budgets.isEmpty {
                fields["rate"] = .string(protection.budgets.map(\.text).joined(separator: ","))
            }
            if !protection.headers.isEmpty { fields["headers"] = .array(protection.headers.map { .string($0.name) }) }
            protectionMetadata[domain.rawValue] = .dictionary(fields)
        }
        let ttl = cache.ttlOverrides.mapValues { Logger.MetadataValue.string(ValueSyntax.text(of: $0)) }
        return [
            "version": .string(UnicacheVersion.current),
            "host": .string(server.host),
            "port": .stringConvertible(server.port),
            "max-connections": .stringConvertible(server.maxConnections),
            "max-connections-per-ip": .stringConvertible(server.maxConnectionsPerIP),
            "idle-timeout": .string(ValueSyntax.text(of: server.idleTimeout)),
            "header-timeout": .string(ValueSyntax.text(of: server.headerTimeout)),
            "header-stall": .string(ValueSyntax.text(of: server.headerStall)),
            "request-timeout": .string(ValueSyntax.text(of: server.requestTimeout)),
            "tls": .string(server.tls == nil ? "off" : "on"),
            "memory-limit-bytes": .stringConvertible(cache.memoryLimitBytes),
            "memory-entries": .stringConvertible(cache.memoryEntries),
            "data-dir": .string(cache.dataDir),
            "disk-limit-bytes": .stringConvertible(cache.diskLimitBytes),
            "eviction": .string(cache.eviction.rawValue),
            "ttl-overrides": .dictionary(ttl),
            "upstreams": .dictionary(upstreamMetadata),
            "demo": .string(upstreams.demo.isEmpty ? "none" : upstreams.demo.map(\.rawValue).sorted().joined(separator: ",")),
            "upstream-paths": .dictionary(upstreams.paths.mapValues { .string($0.text) }),
            "upstream-timeout": .string(ValueSyntax.text(of: upstreams.timeout)),
            "upstream-protection": .dictionary(protectionMetadata),
            "upstream-user-share": .string("\(upstreams.userShare.percent)%"),
            "refresh-interval": .string(cache.refreshInterval == .zero ? "off" : ValueSyntax.text(of: cache.refreshInterval)),
            "demo-latency": .string(ValueSyntax.text(of: upstreams.demoLatency)),
            "admin-token": .string(admin.isTokenSet ? "set" : "unset"),
            "redis": .string(shared.redis.map(\.description) ?? "none"),
            "redis-timeout": .string(ValueSyntax.text(of: shared.timeout)),
            "redis-prefix": .string(shared.prefix),
            "encryption-keys": .string(encryption.keyFile ?? "none"),
            "encryption-migrate": .string(encryption.migrate ? "on" : "off"),
            "log-level": .string(log.level.rawValue),
            "log-format": .string(log.format.rawValue),
            "auth": .string(access.mode.rawValue),
        ]
    }
}
