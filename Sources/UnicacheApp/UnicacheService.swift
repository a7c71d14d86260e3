import DiskTier
import Foundation
import Logging
import MicroHTTPServer
import RedisTier
import Sealing
import ServiceLifecycle
import UnifiedCache

/// Builds the service from its configuration and runs it until SIGINT/SIGTERM.
public enum UnicacheService {
    public static func run(configuration: UnicacheConfiguration, logger: Logger) async throws {
        let keyRing = try configuration.encryption.keyRing()
        let codec = entryCodec(keyRing, logger: logger)
        MemoryReclaimer.limitArenas(logger: logger)
        let clock = SystemWallClock()
        let disk = try await openDiskTier(configuration.cache, codec: codec, clock: clock, logger: logger)
        let shared = sharedTier(configuration, codec: codec, logger: logger)
        let cache = UnifiedCacheManager(
            configuration: MemoryTierConfiguration(
                maxBytes: configuration.cache.memoryLimitBytes, maxEntries: configuration.cache.memoryEntries),
            secondTier: disk, sharedTier: shared, clock: clock, logger: logger)
        let protection = configuration.upstreams.protection
        let upstream = UpstreamClient(
            timeout: configuration.upstreams.timeout,
            connectionsPerUpstream: UpstreamDomain.allCases.map { configuration.upstreams.protection(for: $0).concurrency }.max()
                ?? UpstreamProtection.defaultConcurrency,
            clock: clock, logger: logger)
        let fetchers = try makeFetchers(configuration.upstreams, client: upstream, clock: clock)
        let app = App.build(
            cache: cache, fetcher: { fetchers[$0] ?? DemoFetcher(latency: configuration.upstreams.demoLatency, clock: clock) }, clock: clock, ttlOverrides: configuration.cache.ttlOverrides,
            adminToken: configuration.admin.token, logger: logger, protection: protection,
            slotWait: configuration.upstreams.timeout,
            rateCounter: fleetBudgets(shared), encryption: EncryptionStatus(primaryKey: codec.primaryKeyID))

        let server = MicroHTTPServer(configuration: configuration.server, responder: app.router, logger: logger)
        // The server binds (and logs `listening on …`) inside the group, after the group has trapped
        // SIGTERM/SIGINT: a signal right after the start-up line is a graceful shutdown, never a kill.
        var indexed: (@Sendable () async -> Void)?
        if let disk { indexed = { await disk.waitUntilIndexed() } }
        var services: [any Service] = [
            server,
            MemoryReclaimer(
                cache: cache, memoryLimitBytes: configuration.cache.memoryLimitBytes, indexed: indexed, logger: logger),
        ]
        if let disk { services.append(DiskMaintenance(tier: disk)) }
        let group = ServiceGroup(
            configuration: .init(services: services, gracefulShutdownSignals: [.sigterm, .sigint], logger: logger))
        var failure: (any Error)?
        do { try await group.run() } catch { failure = error }
        await cache.flush()
        await cache.stopSharedTier()
        await upstream.shutdown()
        if let failure { throw failure }
        logger.info("unicache stopped")
    }

    /// The shared Redis tier with `--redis`; it connects lazily, so an unreachable Redis never stops start-up.
    /// A fill lease lasts the upstream timeout and a second, then a waiting instance fetches itself.
    static func sharedTier(
        _ configuration: UnicacheConfiguration, codec: EntryCodec, logger: Logger
    ) -> RedisSharedTier? {
        guard let endpoint = configuration.shared.redis else { return nil }
        return RedisSharedTier(
            configuration: RedisTierConfiguration(
                endpoint: endpoint, timeout: configuration.shared.timeout, prefix: configuration.shared.prefix,
                leaseTime: configuration.upstreams.timeout + .seconds(1)),
            codec: codec, logger: logger)
    }

    /// How the tiers below memory store entries: sealed under the key ring's primary with `--encryption-keys`.
    static func entryCodec(_ keyRing: KeyRing?, logger: Logger) -> EntryCodec {
        if let keyRing {
            logger.info(
                "values at rest are sealed with AES-256-GCM",
                metadata: ["primaryKey": "\(keyRing.primary.id)", "keys": "\(keyRing.keys.count)"])
        }
        return EntryCodec(keyRing: keyRing)
    }

    /// With a shared tier the `--upstream-rate` budgets count the fleet's requests (CONTRACT §6.3).
    static func fleetBudgets(_ shared: RedisSharedTier?) -> RateCounterFactory? {
        guard let shared else { return nil }
        return { domain, windows in FleetRateCounter(domain: domain.rawValue, windows: windows, tier: shared) }
    }

    /// The disk tier, or `nil` with `--disk-limit 0`; an unusable data dir stops start-up with a one-line error.
    static func openDiskTier(
        _ settings: CacheSettings, codec: EntryCodec, clock: any WallClock, logger: Logger
    ) async throws -> DiskTier? {
        guard settings.diskTierEnabled else { return nil }
        do {
            return try await DiskTier.open(
                DiskTierConfiguration(directory: settings.dataDir, limitBytes: settings.diskLimitBytes), codec: codec,
                clock: clock, logger: logger)
        } catch {
            if case .dataDirectoryUnusable(let path, let reason) = error {
                throw ConfigurationError.dataDirectory(path, reason: reason)
            }
            throw ConfigurationError(message: "--disk-limit: \(error.description)")
        }
    }

    static func makeFetchers(
        _ settings: UpstreamSettings, client: UpstreamClient, clock: any WallClock
    ) throws -> [UpstreamDomain: any Fetcher] {
        var fetchers: [UpstreamDomain: any Fetcher] = [:]
        for domain in UpstreamDomain.allCases {
            if let url = settings.url(for: domain) {
                do { fetchers[domain] = try client.fetcher(baseURL: url, headers: settings.protection(for: domain).headers) } catch {
                    throw ConfigurationError(message: "--upstream \(domain.rawValue)=URL: \"\(url)\" is not an http(s) URL")
                }
            } else {
                fetchers[domain] = DemoFetcher(latency: settings.demoLatency, clock: clock)
            }
        }
        return fetchers
    }
}

/// The disk tier's periodic sweep, as a service that stops with the others.
struct DiskMaintenance: Service {
    let tier: DiskTier

    func run() async throws {
        await cancelWhenGracefulShutdown { await tier.run() }
    }
}
