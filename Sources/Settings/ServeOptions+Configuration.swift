import JSONLogging
import Redis
import Sealing

extension ServeOptions {
    /// Checks every value (flag, else `UNICACHE_` variable from `environment`, else the default) and builds the configuration.
    public func configuration(environment: [String: String]) throws(ConfigurationError) -> UnicacheConfiguration {
        let resolver = SettingResolver(environment: environment)
        let defaults = UnicacheConfiguration()
        var server = ServerSettings(
            host: try resolver.value(host, flag: "--host", default: defaults.server.host, format: .host),
            port: try resolver.value(port, flag: "--port", default: defaults.server.port, format: .port),
            maxConnections: try resolver.value(
                maxConnections, flag: "--max-connections", default: defaults.server.maxConnections,
                format: .count(example: "4096")),
            maxConnectionsPerIP: try resolver.value(
                maxConnectionsPerIP, flag: "--max-connections-per-ip", default: defaults.server.maxConnectionsPerIP,
                format: .count(example: "1024")),
            idleTimeout: try resolver.value(
                idleTimeout, flag: "--idle-timeout", default: defaults.server.idleTimeout,
                format: .duration(example: "30s", aboveZero: true)),
            headerTimeout: try resolver.value(
                headerTimeout, flag: "--header-timeout", default: defaults.server.headerTimeout,
                format: .duration(example: "10s", aboveZero: true)),
            headerStall: try resolver.value(
                headerStall, flag: "--header-stall", default: defaults.server.headerStall,
                format: .duration(example: "1s, or 0s to never close a stalled request", aboveZero: false)),
            requestTimeout: try resolver.value(
                requestTimeout, flag: "--request-timeout", default: defaults.server.requestTimeout,
                format: .duration(example: "30s", aboveZero: true)),
            requestIDs: defaults.server.requestIDs)
        server.tls = try Self.tlsCredentials(certificate: tlsCert, key: tlsKey, resolver: resolver)
        var cache = CacheSettings(
            memoryLimitBytes: try resolver.value(
                memoryLimit, flag: "--memory-limit", default: defaults.cache.memoryLimitBytes,
                format: .byteSize(example: "64MiB", aboveZero: true)),
            memoryEntries: try resolver.value(
                memoryEntries, flag: "--memory-entries", default: defaults.cache.memoryEntries,
                format: .count(example: "100000")),
            dataDir: try resolver.value(dataDir, flag: "--data-dir", default: defaults.cache.dataDir, format: .directory),
            diskLimitBytes: try resolver.value(
                diskLimit, flag: "--disk-limit", default: defaults.cache.diskLimitBytes,
                format: .byteSize(example: "1GiB, or 0 to disable the disk tier", aboveZero: false)),
            eviction: try resolver.value(eviction, flag: "--eviction", default: defaults.cache.eviction, format: .eviction),
            ttlOverrides: try Self.ttlOverrides(ttls))
        cache.refreshInterval = try resolver.value(
            refreshInterval, flag: "--refresh-interval", default: defaults.cache.refreshInterval,
            format: .duration(example: "30s, or 0s to never throttle a refresh", aboveZero: false))
        let domains = try Self.upstreamDomains(self, resolver: resolver)
        var upstreamSettings = UpstreamSettings(
            urls: domains.urls,
            timeout: try resolver.value(
                upstreamTimeout, flag: "--upstream-timeout", default: defaults.upstreams.timeout,
                format: .duration(example: "5s", aboveZero: true)),
            demoLatency: try resolver.value(
                demoLatency, flag: "--demo-latency", default: defaults.upstreams.demoLatency,
                format: .duration(example: "200ms", aboveZero: false)),
            protection: domains.protection,
            demo: try Self.demoDomains(demo, urls: domains.urls, resolver: resolver),
            paths: try Self.upstreamPaths(upstreamPaths, urls: domains.urls, resolver: resolver))
        upstreamSettings.userShare = try Self.userShare(upstreamUserShare, resolver: resolver)
        let log = LogSettings(
            level: try resolver.value(logLevel, flag: "--log-level", default: defaults.log.level, format: .logLevel),
            format: try resolver.value(logFormat, flag: "--log-format", default: defaults.log.format, format: .logFormat))
        let shared = SharedTierSettings(
            redis: try Self.redisTLS(
                try Self.redisEndpoint(
                    redis, passwordFile: redisPasswordFile, cluster: try redisClusterSetting(resolver: resolver),
                    resolver: resolver), ca: redisTLSCA, serverName: redisTLSServerName,
                certificate: redisTLSCert, key: redisTLSKey, resolver: resolver),
            timeout: try resolver.value(
                redisTimeout, flag: "--redis-timeout", default: defaults.shared.timeout,
                format: .duration(example: "50ms", aboveZero: true)),
            prefix: try Self.redisPrefix(redisPrefix, resolver: resolver) ?? defaults.shared.prefix)
        let encryption = try encryptionSettings(resolver: resolver)
        return UnicacheConfiguration(
            server: server, cache: cache, upstreams: upstreamSettings,
            admin: AdminSettings(token: try Self.adminToken(adminToken, file: adminTokenFile, resolver: resolver)), log: log, shared: shared,
            access: try accessSettings(resolver: resolver),
            encryption: encryption)
    }

    /// `--encryption-keys` and `--encryption-migrate`; a migration without a key ring has nothing to migrate to and
    /// stops start-up naming the flag.
    func encryptionSettings(resolver: SettingResolver) throws(ConfigurationError) -> EncryptionSettings {
        let keyFile = resolver.text(flag: encryptionKeys, named: "--encryption-keys")
        var migrate = encryptionMigrate
        var migrateSource = "--encryption-migrate"
        if !migrate, let (text, source) = resolver.text(flag: nil, named: "--encryption-migrate") {
            migrate = try ValueFormat.boolean.value(of: text, from: source)
            migrateSource = source
        }
        if migrate, keyFile == nil {
            throw ConfigurationError(
                message: "\(migrateSource): a migration to sealed values needs a key ring "
                    + "(add --encryption-keys FILE, or drop \(migrateSource))")
        }
        return EncryptionSettings(
            keyFile: keyFile?.text, source: keyFile?.source ?? "--encryption-keys", migrate: migrate)
    }

    /// `--redis-cluster` (or its variable): where it was given, nil when off.
    func redisClusterSetting(resolver: SettingResolver) throws(ConfigurationError) -> String? {
        if redisCluster { return "--redis-cluster" }
        guard let (text, source) = resolver.text(flag: nil, named: "--redis-cluster") else { return nil }
        return try ValueFormat.boolean.value(of: text, from: source) ? source : nil
    }

    /// `--redis`, with its password from `--redis-password-file` when given (not both): the error names the flags
    /// and the form, never the password. With `--redis-cluster` (`cluster`: where it was given) the URL names a seed
    /// node of a Redis Cluster.
    static func redisEndpoint(
        _ flagValue: String?, passwordFile: String?, cluster: String? = nil, resolver: SettingResolver
    ) throws(ConfigurationError) -> RedisEndpoint? {
        let file = resolver.text(flag: passwordFile, named: "--redis-password-file")
        guard let (text, source) = resolver.text(flag: flagValue, named: "--redis") else {
            if let file { throw ConfigurationError(message: "\(file.source): given without a --redis URL (the password is Redis's)") }
            if let cluster { throw ConfigurationError(message: "\(cluster): given without a --redis URL (a seed node of the cluster)") }
            return nil
        }
        var endpoint: RedisEndpoint
        do {
            endpoint = try RedisEndpoint(url: text.trimmingWhitespace(), passwordGivenApart: file != nil, cluster: cluster != nil)
        } catch {
            let expected =
                cluster == nil
                ? "redis://[[user]:password@]host[:port][/db], rediss://… or redis-sentinel://HOST[:PORT][,…]?master=NAME"
                : "with \(cluster!), a seed node: redis://[[user]:password@]host[:port][?addr=HOST:PORT&addr=…] or rediss://…"
            throw ConfigurationError(message: "\(source): \(error.reason) (expected \(expected))")
        }
        guard let file else { return endpoint }
        guard endpoint.password == nil else {
            throw ConfigurationError(
                message: "\(file.source): given with a password in \(source) (choose one: the file keeps the password off the command line)")
        }
        let password = try secretText(fromFile: file, holding: "the password")
        guard !password.isEmpty else {
            throw ConfigurationError(message: "\(file.source): \(ConfigurationError.quoted(file.text)) is empty (a file holding the password alone)")
        }
        endpoint.password = password
        return endpoint
    }

    /// `--redis-prefix`: 1–64 visible ASCII characters.
    static func redisPrefix(_ flagValue: String?, resolver: SettingResolver) throws(ConfigurationError) -> String? {
        guard let (text, source) = resolver.text(flag: flagValue, named: "--redis-prefix") else { return nil }
        guard (1...64).contains(text.utf8.count), text.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw ConfigurationError(
                message: "\(source): \"\(text)\" is not a key prefix (expected 1–64 visible ASCII characters, e.g. unicache: or shop1:)")
        }
        return text
    }

    /// `--admin-token`, or `--admin-token-file` (CONTRACT §8.9), not both. The token is never echoed in an error.
    static func adminToken(
        _ flagValue: String?, file fileFlagValue: String?, resolver: SettingResolver
    ) throws(ConfigurationError) -> String? {
        let given = resolver.text(flag: flagValue, named: "--admin-token")
        let file = resolver.text(flag: fileFlagValue, named: "--admin-token-file")
        if let given, let file {
            throw ConfigurationError(
                message: "\(file.source): given with \(given.source) (choose one: the file keeps the token off the command line)")
        }
        if let file { return try adminToken(fromFile: file) }
        guard let (text, source) = given else { return nil }
        return try checkedAdminToken(text.trimmingWhitespace(), source: source)
    }

    /// The token in a secret file (`secretText`).
    static func adminToken(fromFile file: (text: String, source: String)) throws(ConfigurationError) -> String {
        try checkedAdminToken(try secretText(fromFile: file, holding: "the token"), source: file.source)
    }

    /// The text of a file holding one secret (`what`: "the token", "the password"): mode 600 or 400, UTF-8, one
    /// trailing newline (`\n` or `\r\n`) not part of it. Errors name the flag and the path, never the secret.
    static func secretText(fromFile file: (text: String, source: String), holding what: String) throws(ConfigurationError) -> String {
        let path = ConfigurationError.quoted(file.text)
        let bytes: [UInt8]
        do {
            bytes = try SecretFile.contents(of: file.text, limit: 4096)
        } catch {
            let advice = if case .tooOpen = error { "chmod 600 \(file.text)" } else { "a file holding \(what) alone" }
            throw ConfigurationError(message: "\(file.source): \(path) \(error) (\(advice))")
        }
        var secret = bytes[...]
        if secret.last == UInt8(ascii: "\n") { secret = secret.dropLast() }
        if secret.last == UInt8(ascii: "\r") { secret = secret.dropLast() }
        guard let text = String(validating: secret, as: UTF8.self) else {
            throw ConfigurationError(message: "\(file.source): \(path) is not UTF-8 text (a file holding \(what) alone)")
        }
        return text
    }

    private static func checkedAdminToken(_ token: String, source: String) throws(ConfigurationError) -> String {
        guard !token.isEmpty, !token.unicodeScalars.contains(where: { $0.properties.isWhitespace || $0.value < 0x20 })
        else {
            throw ConfigurationError(
                message: "\(source): the token is empty or contains spaces or control characters "
                    + "(use a printable secret without spaces, e.g. from `openssl rand -hex 32`)")
        }
        return token
    }
}
