import Foundation
import Settings
import UnifiedCache
import UpstreamGate

/// The JSON document of `GET /stats` (CONTRACT §5).
struct StatsDocument: Encodable {
    struct Counters: Encodable {
        var hits, misses, coalesced, stale, refreshes: Int
        var evictions: Int?
        var hitRate: Double
        /// The whole cache's only: hits by the tier that answered them.
        var hitsByTier: HitsByTier?

        init(_ counters: RequestCounters, evictions: Int? = nil) {
            hits = counters.hits
            misses = counters.misses
            coalesced = counters.coalesced
            stale = counters.stale
            refreshes = counters.refreshes
            self.evictions = evictions
            hitRate = counters.hitRate
        }
    }

    struct HitsByTier: Encodable {
        var memory, disk, shared: Int
    }

    /// The memory tier's sizes and its eviction policy's decisions (CONTRACT §12.6; `window` is null under `lru`).
    struct Memory: Encodable {
        var statistics: MemoryTierStatistics

        enum CodingKeys: String, CodingKey {
            case entries, bytes, limitBytes, limitEntries, evictions, admitted, rejected, window
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            for (key, value) in [
                (CodingKeys.entries, statistics.entries), (.bytes, statistics.bytes), (.limitBytes, statistics.limitBytes),
                (.limitEntries, statistics.limitEntries), (.evictions, statistics.evictions),
                (.admitted, statistics.decisions.admitted), (.rejected, statistics.decisions.rejected),
            ] {
                try container.encode(value, forKey: key)
            }
            try container.encode(statistics.decisions.window, forKey: .window)
        }
    }

    /// The disk tier's sizes, errors and its eviction policy's decisions; zeros (and a null `window`) without one.
    struct Disk: Encodable {
        var enabled: Bool
        var statistics: SecondTierStatistics

        enum CodingKeys: String, CodingKey {
            case enabled, entries, bytes, limitBytes, evictions, corrupt, writeErrors, readErrors, undecryptable
            case admitted, rejected, window
        }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(enabled, forKey: .enabled)
            for (key, value) in [
                (CodingKeys.entries, statistics.entries), (.bytes, statistics.bytes), (.limitBytes, statistics.limitBytes),
                (.evictions, statistics.evictions), (.corrupt, statistics.corrupt), (.writeErrors, statistics.writeErrors),
                (.readErrors, statistics.readErrors), (.undecryptable, statistics.undecryptable),
                (.admitted, statistics.decisions.admitted), (.rejected, statistics.decisions.rejected),
            ] {
                try container.encode(value, forKey: key)
            }
            try container.encode(statistics.decisions.window, forKey: .window)
        }
    }

    /// The fleet's shared tier (CONTRACT §6.7); `enabled` false and zeros without `--redis`.
    struct Shared: Encodable {
        var enabled, connected: Bool
        var hits, misses, errors, corrupt, invalidationsSent, invalidationsReceived: Int
        /// Sealed values that did not open (CONTRACT §9.2).
        var undecryptable: Int
        /// Instances the fleet announces (the fallback budgets divide by it).
        var instances: Int
        /// Changes applied from the fleet's log after a loss or a restart; times the log could not vouch (§6.6).
        var replayed, resets: Int
        /// The link (§10.6): `host:port` in use (null without `--redis`), TLS or not, primary switches followed,
        /// connects refused for their TLS and for their credentials.
        var endpoint: String?
        var tls: Bool
        var failovers, tlsErrors, authErrors: Int
        /// With `--redis-cluster` (CONTRACT §13.6), left out otherwise.
        var cluster: Cluster?

        struct Cluster: Encodable {
            var nodes, slotsCovered, moved, ask, mapRefreshes: Int
        }

        init(_ statistics: SharedTierStatistics?) {
            let s = statistics ?? SharedTierStatistics()
            enabled = statistics != nil
            connected = s.connected
            hits = s.hits
            misses = s.misses
            errors = s.errors
            corrupt = s.corrupt
            undecryptable = s.undecryptable
            invalidationsSent = s.invalidationsSent
            invalidationsReceived = s.invalidationsReceived
            instances = s.instances
            replayed = s.replayed
            resets = s.resets
            endpoint = s.endpoint
            tls = s.tls
            failovers = s.failovers
            tlsErrors = s.tlsErrors
            authErrors = s.authErrors
            cluster = s.cluster.map {
                Cluster(nodes: $0.nodes, slotsCovered: $0.slotsCovered, moved: $0.moved, ask: $0.ask, mapRefreshes: $0.mapRefreshes)
            }
        }

        enum CodingKeys: String, CodingKey {
            case enabled, connected, hits, misses, errors, corrupt, invalidationsSent, invalidationsReceived, undecryptable
            case instances, replayed, resets, endpoint, tls, failovers, tlsErrors, authErrors, cluster
        }

        /// Every field, `endpoint` written as null without `--redis` (not left out).
        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(enabled, forKey: .enabled)
            try container.encode(connected, forKey: .connected)
            for (key, value) in [
                (CodingKeys.hits, hits), (.misses, misses), (.errors, errors), (.corrupt, corrupt),
                (.invalidationsSent, invalidationsSent), (.invalidationsReceived, invalidationsReceived),
                (.undecryptable, undecryptable), (.instances, instances), (.replayed, replayed), (.resets, resets),
                (.failovers, failovers), (.tlsErrors, tlsErrors), (.authErrors, authErrors),
            ] {
                try container.encode(value, forKey: key)
            }
            try container.encode(endpoint, forKey: .endpoint)
            try container.encode(tls, forKey: .tls)
            try container.encodeIfPresent(cluster, forKey: .cluster)
        }
    }

    /// Values at rest (CONTRACT §9.5): the primary key's ID (null without a key ring), never a key.
    struct Encryption: Encodable {
        var enabled: Bool
        var primaryKey: String?

        enum CodingKeys: String, CodingKey { case enabled, primaryKey }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(enabled, forKey: .enabled)
            try container.encode(primaryKey, forKey: .primaryKey)
        }
    }

    struct Latency: Encodable {
        var p50, p90, p99: Double
    }

    struct Upstream: Encodable {
        var fetches, failures: Int
        var latencyMs: Latency
        var domains: [String: Domain]
    }

    /// A domain's upstream gate (CONTRACT §7.5).
    struct Domain: Encodable {
        var inFlight: Int
        /// Null without a budget (written as null, not left out).
        var budgetRemaining: Int?
        var rejected: [String: Int]
        var circuit: String
        /// Forced refreshes answered from a recent copy (`--refresh-interval`, CONTRACT §15.5).
        var refreshThrottled: Int

        init(_ snapshot: UpstreamGateSnapshot) {
            inFlight = snapshot.inFlight
            budgetRemaining = snapshot.budgetRemaining
            rejected = Dictionary(uniqueKeysWithValues: UpstreamRefusal.Reason.allCases.map {
                ($0.rawValue, snapshot.rejected[$0, default: 0])
            })
            circuit = snapshot.circuit.rawValue
            refreshThrottled = snapshot.refreshThrottled
        }

        enum CodingKeys: String, CodingKey { case inFlight, budgetRemaining, rejected, circuit, refreshThrottled }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(inFlight, forKey: .inFlight)
            try container.encode(budgetRemaining, forKey: .budgetRemaining)
            try container.encode(rejected, forKey: .rejected)
            try container.encode(circuit, forKey: .circuit)
            try container.encode(refreshThrottled, forKey: .refreshThrottled)
        }
    }

    var uptimeSeconds: Int
    var cache: Counters
    var memory: Memory
    var disk: Disk
    var shared: Shared
    var encryption: Encryption
    var upstream: Upstream
    var namespaces: [String: Counters]
    /// Who was let in (CONTRACT §8.8).
    var auth = Auth(nil)
    /// The release (CONTRACT §11.5).
    var version = UnicacheVersion.current
    /// Where each domain is served from (CONTRACT §11.1): `demo`, `none`, or the upstream's scheme, host and port.
    var upstreams: [String: Source] = [:]

    struct Source: Encodable, Equatable {
        var source: String
    }

    init(
        _ statistics: CacheStatistics, gates: [(domain: UpstreamDomain, snapshot: UpstreamGateSnapshot)], uptimeSeconds: Int,
        encryption: EncryptionStatus = EncryptionStatus()
    ) {
        self.uptimeSeconds = uptimeSeconds
        cache = Counters(statistics.requests, evictions: statistics.evictions)
        let tiers = statistics.hitsByTier
        cache.hitsByTier = HitsByTier(memory: tiers.memory, disk: tiers.disk, shared: tiers.shared)
        memory = Memory(statistics: statistics.memory)
        disk = Disk(enabled: statistics.secondTier != nil, statistics: statistics.secondTier ?? SecondTierStatistics())
        shared = Shared(statistics.shared)
        self.encryption = Encryption(enabled: encryption.enabled, primaryKey: encryption.primaryKey)
        let up = statistics.upstream
        upstream = Upstream(
            fetches: up.fetches, failures: up.failures,
            latencyMs: Latency(p50: up.latencyP50Ms, p90: up.latencyP90Ms, p99: up.latencyP99Ms),
            domains: Dictionary(uniqueKeysWithValues: gates.map { ($0.domain.rawValue, Domain($0.snapshot)) }))
        namespaces = statistics.namespaces.mapValues { Counters($0) }
    }

    func encoded() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? Array(encoder.encode(self))) ?? Array("{}".utf8)
    }
}
