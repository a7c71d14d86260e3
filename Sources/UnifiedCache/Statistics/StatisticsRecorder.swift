import NIOConcurrencyHelpers

/// Records requests and fetches as they happen; `snapshot` turns them into a `CacheStatistics`.
final class StatisticsRecorder: Sendable {
    private struct State {
        var namespaces: [String: RequestCounters] = [:]
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
            case .hit: state.namespaces[namespace, default: RequestCounters()].hits += 1
            case .miss: state.namespaces[namespace, default: RequestCounters()].misses += 1
            case .coalesced: state.namespaces[namespace, default: RequestCounters()].coalesced += 1
            case .stale: state.namespaces[namespace, default: RequestCounters()].stale += 1
            case .refresh: state.namespaces[namespace, default: RequestCounters()].refreshes += 1
            }
        }
    }

    /// One fetch that ran (not its waiters), its duration and whether it failed.
    func recordFetch(namespace: String, seconds: Double, failed: Bool) {
        state.withLockedValue { state in
            state.namespaces[namespace, default: RequestCounters()].fetches += 1
            if failed { state.namespaces[namespace, default: RequestCounters()].fetchFailures += 1 }
            state.latency.record(seconds: seconds)
        }
    }

    /// A fetch that failed before any request reached the upstream: a failure, not a fetch.
    func recordUnsentFailure(namespace: String) {
        state.withLockedValue { $0.namespaces[namespace, default: RequestCounters()].fetchFailures += 1 }
    }

    func snapshot(memory: MemoryTierStatistics, secondTier: SecondTierStatistics?) -> CacheStatistics {
        let (namespaces, latency, tierHits) = state.withLockedValue { ($0.namespaces, $0.latency, $0.tierHits) }
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
