import NIOConcurrencyHelpers

/// Records requests and fetches as they happen; `snapshot` turns them into a `CacheStatistics`.
final class StatisticsRecorder: Sendable {
    private struct State {
        /// The counters of each namespace seen, found by a scan: namespaces are the service's own few names (a
        /// resource's, `raw`), never a client's, and a scan of a dozen short names costs less than hashing one
        /// (as the HTTP metrics find their route and status).
        var namespaces: [(name: String, counters: RequestCounters)] = []
        var latency = LatencyRecorder()
        var tierHits = TierHits()

        /// The place of `namespace`'s counters, added when it is new.
        mutating func place(of namespace: String) -> Int {
            if let place = namespaces.firstIndex(where: { $0.name == namespace }) { return place }
            namespaces.append((namespace, RequestCounters()))
            return namespaces.count - 1
        }
    }

    private let state = NIOLockedValueBox(State())

    init() {}

    /// A hit also counts for the tier that answered it (`tier`).
    func record(_ outcome: CacheOutcome, namespace: String, tier: CacheTier? = nil) {
        state.withLockedValue { state in
            switch tier {
            case .memory: state.tierHits.memory += 1
            case .disk: state.tierHits.disk += 1
            case .shared: state.tierHits.shared += 1
            case nil: break
            }
            let place = state.place(of: namespace)
            switch outcome {
            case .hit: state.namespaces[place].counters.hits += 1
            case .miss: state.namespaces[place].counters.misses += 1
            case .coalesced: state.namespaces[place].counters.coalesced += 1
            case .stale: state.namespaces[place].counters.stale += 1
            case .refresh: state.namespaces[place].counters.refreshes += 1
            }
        }
    }

    /// One fetch that ran (not its waiters), its duration and whether it failed.
    func recordFetch(namespace: String, seconds: Double, failed: Bool) {
        state.withLockedValue { state in
            let place = state.place(of: namespace)
            state.namespaces[place].counters.fetches += 1
            if failed { state.namespaces[place].counters.fetchFailures += 1 }
            state.latency.record(seconds: seconds)
        }
    }

    /// A fetch that failed before any request reached the upstream: a failure, not a fetch.
    func recordUnsentFailure(namespace: String) {
        state.withLockedValue { state in
            state.namespaces[state.place(of: namespace)].counters.fetchFailures += 1
        }
    }

    func snapshot(memory: MemoryTierStatistics, secondTier: SecondTierStatistics?) -> CacheStatistics {
        let (counted, latency, tierHits) = state.withLockedValue { ($0.namespaces, $0.latency, $0.tierHits) }
        let namespaces = Dictionary(uniqueKeysWithValues: counted.map { ($0.name, $0.counters) })
        let total = namespaces.values.reduce(RequestCounters(), +)
        var upstream = latency.statistics()
        upstream.fetches = total.fetches
        upstream.failures = total.fetchFailures
        var statistics = CacheStatistics(
            requests: total, namespaces: namespaces, upstream: upstream, memory: memory, secondTier: secondTier)
        statistics.hitsByTier = tierHits
        return statistics
    }
}
