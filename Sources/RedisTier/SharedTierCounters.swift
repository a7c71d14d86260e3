import NIOConcurrencyHelpers
import UnifiedCache

/// The shared tier's counters (CONTRACT §6.7), behind one lock.
final class SharedTierCounters: Sendable {
    private struct Counts {
        var statistics = SharedTierStatistics()
        /// `get` commands answered `ok` whose value was served: a shared hit's two counts in one step, without the
        /// operations' dictionary (two strings hashed per hit); added to `operations` when read.
        var servedGets = 0
    }

    private let state = NIOLockedValueBox(Counts())

    func hit() { state.withLockedValue { $0.statistics.hits += 1 } }
    func miss() { state.withLockedValue { $0.statistics.misses += 1 } }
    func corrupt() { state.withLockedValue { $0.statistics.corrupt += 1 } }
    func undecryptable() { state.withLockedValue { $0.statistics.undecryptable += 1 } }
    func sent() { state.withLockedValue { $0.statistics.invalidationsSent += 1 } }
    func received() { state.withLockedValue { $0.statistics.invalidationsReceived += 1 } }
    func replayed(_ count: Int) { state.withLockedValue { $0.statistics.replayed += count } }
    func reset() { state.withLockedValue { $0.statistics.resets += 1 } }

    /// A `get` answered `ok` whose value was served: that operation and a hit.
    func servedGet() {
        state.withLockedValue { counts in
            counts.servedGets += 1
            counts.statistics.hits += 1
        }
    }

    /// One command's result; `error` results also count in `errors`.
    func operation(_ operation: String, _ result: String) {
        state.withLockedValue { counts in
            counts.statistics.operations[.init(operation, result), default: 0] += 1
            if result == "error" { counts.statistics.errors += 1 }
        }
    }

    func snapshot(connected: Bool, state reason: String?) -> SharedTierStatistics {
        var (statistics, servedGets) = state.withLockedValue { ($0.statistics, $0.servedGets) }
        if servedGets > 0 { statistics.operations[.init("get", "ok"), default: 0] += servedGets }
        statistics.connected = connected
        statistics.state = reason
        return statistics
    }
}
