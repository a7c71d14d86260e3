import Clocks
import DemoUpstream
import DiskTier
import Logging
import Redis
import RedisTier
import Settings
import UnifiedCache
import UpstreamGate
import UpstreamHTTP

/// The parts `UnicacheService.build` assembles, each from its slice of the configuration.
extension UnicacheService {
    /// The shared Redis tier with `--redis`; it connects lazily, so an unreachable Redis never stops start-up.
    /// A fill lease lasts the upstream timeout and a second, then a waiting instance fetches itself. With a disk
    /// tier, the position applied from the fleet's log is kept in its folder, so a restart catches up (CONTRACT §6.6).
    static func sharedTier(
        _ configuration: UnicacheConfiguration, codec: EntryCodec, clock: any WallClock, ticker: any Clock<Duration>,
        logger: Logger
    ) -> RedisSharedTier? {
        guard let endpoint = configuration.shared.redis else { return nil }
        if let warning = sentinelTrustWarning(endpoint) { logger.warning("\(warning)") }
        let cache = configuration.cache
        var tier = RedisTierConfiguration(
            endpoint: endpoint, timeout: configuration.shared.timeout, prefix: configuration.shared.prefix,
            leaseTime: configuration.upstreams.timeout + .seconds(1),
            checkpointFile: cache.diskTierEnabled ? cache.dataDir + "/" + Self.checkpointFileName : nil)
        tier.userKeys = ResourceTable.userKeys
        return RedisSharedTier(configuration: tier, codec: codec, clock: clock, ticker: ticker, logger: logger)
    }

    /// Sentinels answer unauthenticated: over plain TCP to one that is not on loopback, whoever answers at its address
    /// can name a primary of their choosing, and this instance sends it the data nodes' password and the fleet's data.
    static func sentinelTrustWarning(_ endpoint: RedisEndpoint) -> String? {
        let exposed = endpoint.sentinelsTrustedUnauthenticated
        guard !exposed.isEmpty else { return nil }
        return "Sentinels are trusted unauthenticated: over plain TCP, whoever answers at "
            + exposed.map(\.description).joined(separator: ", ")
            + " can redirect this instance to a Redis of their choosing and collect the data nodes' password and the fleet's data;"
            + " use ?tls=true with --redis-tls-server-name, or Sentinels on a network only the fleet reaches"
    }

    /// The log checkpoint's name in the data folder (beside the disk tier's `0`…`f` entry folders).
    static let checkpointFileName = "fleet-log-position"

    /// How the tiers below memory store entries: sealed under the key ring's primary with `--encryption-keys`
    /// (CONTRACT §9); a bad ring stops start-up with one line naming the flag. The one place the plaintext policy
    /// is decided: with a ring, plaintext values fail to open unless `--encryption-migrate` (§9.2).
    static func entryCodec(_ settings: EncryptionSettings, logger: Logger) throws(ConfigurationError) -> EntryCodec {
        guard let keyRing = try settings.keyRing() else { return EntryCodec() }
        logger.info(
            "values at rest are sealed with AES-256-GCM",
            metadata: ["primaryKey": "\(keyRing.primary.id)", "keys": "\(keyRing.keys.count)"])
        if settings.migrate {
            logger.warning(
                "--encryption-migrate: values stored in the clear are read and served, and POST /v1/admin/rekey seals them; whoever can write to the data folder or to Redis can make this instance serve a body of their choosing until it restarts without the flag")
        }
        return EntryCodec(keyRing: keyRing, acceptPlaintext: settings.migrate)
    }

    /// With a shared tier the `--upstream-rate` budgets count the fleet's requests (CONTRACT §6.3).
    static func fleetBudgets(_ shared: RedisSharedTier?) -> RateCounterFactory? {
        guard let shared else { return nil }
        return { domain, windows, userShare in
            FleetRateCounter(
                domain: domain.rawValue, windows: windows, commands: shared.commands, membership: shared.membership,
                userShare: userShare)
        }
    }

    /// The disk tier, or `nil` with `--disk-limit 0`; an unusable data dir stops start-up with a one-line error.
    /// The data dir's lock (nil without a disk tier): a folder another running service holds stops start-up.
    static func lockDataDirectory(_ settings: CacheSettings) throws -> DataDirectoryLock? {
        guard settings.diskTierEnabled else { return nil }
        do {
            return try DataDirectoryLock.acquire(settings.dataDir)
        } catch {
            throw Self.configurationError(error)
        }
    }

    /// A disk tier that cannot open, as the start-up error naming the flag.
    private static func configurationError(_ error: DiskTierError) -> ConfigurationError {
        switch error {
        case .dataDirectoryUnusable(let path, let reason): ConfigurationError.dataDirectory(path, reason: reason)
        case .dataDirectoryInUse(let path, let holder): ConfigurationError.dataDirectoryInUse(path, holder: holder)
        case .invalidLimit: ConfigurationError(message: "--disk-limit: \(error.description)")
        }
    }

    static func openDiskTier(
        _ settings: CacheSettings, codec: EntryCodec, clock: any WallClock, ticker: any Clock<Duration>, logger: Logger
    ) async throws -> DiskTier? {
        guard settings.diskTierEnabled else { return nil }
        do {
            return try await DiskTier.open(
                DiskTierConfiguration(
                    directory: settings.dataDir, limitBytes: settings.diskLimitBytes, eviction: settings.eviction),
                codec: codec, clock: clock, ticker: ticker, logger: logger)
        } catch {
            throw Self.configurationError(error)
        }
    }

    /// Each domain's fetcher: its upstream, the demo (`--demo`), or none (its routes answer 503, CONTRACT §11.1).
    static func makeFetchers(
        _ settings: UpstreamSettings, client: UpstreamClient, clock: any WallClock, ticker: any Clock<Duration>
    ) throws -> [UpstreamDomain: any Fetcher] {
        let elapsed = Elapsed(ticker)
        var fetchers: [UpstreamDomain: any Fetcher] = [:]
        for domain in UpstreamDomain.allCases {
            switch settings.source(for: domain) {
            case .upstream(let url):
                do {
                    fetchers[domain] = try client.fetcher(
                        baseURL: url, headers: settings.protection(for: domain).headers, paths: settings.paths)
                } catch {
                    throw ConfigurationError(message: "--upstream \(domain.rawValue)=URL: \"\(url)\" is not an http(s) URL")
                }
            case .demo:
                fetchers[domain] = DemoFetcher(
                    latency: settings.demoLatency, clock: clock, sleeper: { try await elapsed.sleep(for: $0) })
            case .none:
                break
            }
        }
        return fetchers
    }
}
