import Foundation
import UnifiedCache

/// The JSON document of `GET /stats` (CONTRACT §5).
struct StatsDocument: Encodable {
    struct Counters: Encodable {
        var hits, misses, coalesced, stale, refreshes: Int
        var evictions: Int?
        var hitRate: Double

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

    struct Memory: Encodable {
        var entries, bytes, limitBytes, limitEntries, evictions: Int
    }

    struct Disk: Encodable {
        var enabled: Bool
        var entries, bytes, limitBytes, evictions, corrupt, writeErrors, readErrors: Int
    }

    struct Latency: Encodable {
        var p50, p90, p99: Double
    }

    struct Upstream: Encodable {
        var fetches, failures: Int
        var latencyMs: Latency
    }

    var uptimeSeconds: Int
    var cache: Counters
    var memory: Memory
    var disk: Disk
    var upstream: Upstream
    var namespaces: [String: Counters]

    init(_ statistics: CacheStatistics, uptimeSeconds: Int) {
        self.uptimeSeconds = uptimeSeconds
        cache = Counters(statistics.requests, evictions: statistics.evictions)
        let memory = statistics.memory
        self.memory = Memory(
            entries: memory.entries, bytes: memory.bytes, limitBytes: memory.limitBytes,
            limitEntries: memory.limitEntries, evictions: memory.evictions)
        let disk = statistics.secondTier ?? SecondTierStatistics()
        self.disk = Disk(
            enabled: statistics.secondTier != nil, entries: disk.entries, bytes: disk.bytes, limitBytes: disk.limitBytes,
            evictions: disk.evictions, corrupt: disk.corrupt, writeErrors: disk.writeErrors, readErrors: disk.readErrors)
        let up = statistics.upstream
        upstream = Upstream(
            fetches: up.fetches, failures: up.failures,
            latencyMs: Latency(p50: up.latencyP50Ms, p90: up.latencyP90Ms, p99: up.latencyP99Ms))
        namespaces = statistics.namespaces.mapValues { Counters($0) }
    }

    func encoded() -> [UInt8] {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        return (try? Array(encoder.encode(self))) ?? Array("{}".utf8)
    }
}
