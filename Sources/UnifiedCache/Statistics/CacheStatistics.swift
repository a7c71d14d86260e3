/// The request counters of one namespace or of the whole cache. Every `get` lands in exactly one of
/// hits / misses / coalesced / stale / refreshes, decided as follows:
/// - a remembered 404 (negative entry) served from a tier is a hit;
/// - a fetch that fails with nothing servable is a miss for the request that ran it (a refresh when forced)
///   and coalesced for its waiters; an upstream 404 is an answer, not a fetch failure;
/// - `only-if-cached` with nothing servable (`CacheError.notCached`) counts in none.
/// Only the request that ran a fetch records it (`fetches`, `fetchFailures`, latency); background refreshes
/// record fetches but no request.
public struct RequestCounters: Sendable, Equatable {
    public var hits = 0
    public var misses = 0
    public var coalesced = 0
    public var stale = 0
    public var refreshes = 0
    /// Fetches this namespace ran (background refreshes included) and how many failed.
    public var fetches = 0
    package var fetchFailures = 0

    public init() {}

    public var requests: Int { hits + misses + coalesced + stale + refreshes }
    /// hits / requests, 0 when there were none.
    public var hitRate: Double { requests == 0 ? 0 : Double(hits) / Double(requests) }

    static func + (lhs: RequestCounters, rhs: RequestCounters) -> RequestCounters {
        var sum = lhs
        sum.hits += rhs.hits
        sum.misses += rhs.misses
        sum.coalesced += rhs.coalesced
        sum.stale += rhs.stale
        sum.refreshes += rhs.refreshes
        sum.fetches += rhs.fetches
        sum.fetchFailures += rhs.fetchFailures
        return sum
    }
}

/// Upstream fetch counters and latency.
public struct UpstreamStatistics: Sendable, Equatable {
    public var fetches = 0
    public var failures = 0
    /// Latency percentiles over the most recent fetches (up to `LatencyRecorder.reservoirSize`), in ms.
    public var latencyP50Ms = 0.0
    public var latencyP90Ms = 0.0
    public var latencyP99Ms = 0.0
    /// A Prometheus-style histogram of every fetch: upper bounds in seconds and cumulative counts (last = +Inf).
    package var latencyBucketBounds: [Double] = LatencyRecorder.bucketBounds
    package var latencyBucketCounts: [Int] = []
    package var latencySumSeconds = 0.0

    public init() {}
}

/// An immutable snapshot of the cache's statistics (Caffeine's `CacheStats`).
public struct CacheStatistics: Sendable, Equatable {
    /// Totals over every namespace.
    public var requests: RequestCounters
    public var namespaces: [String: RequestCounters]
    public var upstream: UpstreamStatistics
    public var memory: MemoryTierStatistics
    /// `nil` without a second tier.
    public var secondTier: SecondTierStatistics?
    /// `nil` without a shared tier.
    public var shared: SharedTierStatistics?
    /// Hits by the tier that answered them (remembered 404s included): their sum is `requests.hits`.
    public var hitsByTier = TierHits()

    public init(
        requests: RequestCounters, namespaces: [String: RequestCounters], upstream: UpstreamStatistics,
        memory: MemoryTierStatistics, secondTier: SecondTierStatistics?
    ) {
        self.requests = requests
        self.namespaces = namespaces
        self.upstream = upstream
        self.memory = memory
        self.secondTier = secondTier
    }

    /// Entries removed from a tier to keep its budget: memory + second tier.
    public var evictions: Int { memory.evictions + (secondTier?.evictions ?? 0) }
}

/// Hits counted by the tier that answered them.
public struct TierHits: Sendable, Equatable {
    public var memory = 0
    public var disk = 0
    public var shared = 0

    public init() {}
}
