import NIOConcurrencyHelpers

/// Records requests and fetches as they happen; `snapshot` turns them into a `CacheStatistics`.
final class StatisticsRecorder: Sendable {
    /// A namespace as the table's key, hashed by its length only: namespaces are the service's own few names
    /// (a resource's, `raw`), never a client's, so a collision costs a comparison of two short strings now and
    /// then, and every request saves SipHash over the name.
    private struct Namespace: Hashable {
        let name: String

        func hash(into hasher: inout Hasher) { hasher.combine(name.utf8.count) }
    }

    private struct State {
        var namespaces: [Namespace: RequestCounters] = [:]
        var latency = LatencyRecorder()
        var tierHits = TierHits()
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
            switch outcome {
            case .hit: state.namespaces[Namespace(name: namespace), default: RequestCounters()].hits += 1
            case .miss: state.namespaces[Namespace(name: namespace), default: RequestCounters()].misses += 1
            case .coalesced: state.namespaces[Namespace(name: namespace), default: RequestCounters()].coalesced += 1
            case .stale: state.namespaces[Namespace(name: namespace), default: RequestCounters()].stale += 1
            case .refresh: state.namespaces[Namespace(name: namespace), default: RequestCounters()].refreshes += 1
            }
        }
    }

    /// One fetch that ran (not its waiters), its duration and whether it failed.
    func recordFetch(namespace: String, seconds: Double, failed: Bool) {
        state.withLockedValue { state in
            state.namespaces[Namespace(name: namespace), default: RequestCounters()].fetches += 1
            if failed { state.namespaces[Namespace(name: namespace), default: RequestCounters()].fetchFailures += 1 }
            state.latency.record(seconds: seconds)
        }
    }

    /// A fetch that failed before any request reached the upstream: a failure, not a fetch.
    func recordUnsentFailure(namespace: String) {
        state.withLockedValue { state in
            state.namespaces[Namespace(name: namespace), default: RequestCounters()].fetchFailures += 1
        }
    }

    func snapshot(memory: MemoryTierStatistics, secondTier: SecondTierStatistics?) -> CacheStatistics {
        let (counted, latency, tierHits) = state.withLockedValue { ($0.namespaces, $0.latency, $0.tierHits) }
        let namespaces = Dictionary(uniqueKeysWithValues: counted.map { ($0.key.name, $0.value) })
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
