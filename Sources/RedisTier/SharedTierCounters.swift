import NIOConcurrencyHelpers
import UnifiedCache

/// The shared tier's counters (CONTRACT §6.7), behind one lock.
final class SharedTierCounters: Sendable {
    private let state = NIOLockedValueBox(SharedTierStatistics())

    func hit() { state.withLockedValue { $0.hits += 1 } }
    func miss() { state.withLockedValue { $0.misses += 1 } }
    func corrupt() { state.withLockedValue { $0.corrupt += 1 } }
    func undecryptable() { state.withLockedValue { $0.undecryptable += 1 } }
    func sent() { state.withLockedValue { $0.invalidationsSent += 1 } }
    func received() { state.withLockedValue { $0.invalidationsReceived += 1 } }
    func replayed(_ count: Int) { state.withLockedValue { $0.replayed += count } }
    func reset() { state.withLockedValue { $0.resets += 1 } }

    /// One command's result; `error` results also count in `errors`.
    func operation(_ operation: String, _ result: String) {
        state.withLockedValue { state in
            state.operations[.init(operation, result), default: 0] += 1
            if result == "error" { state.errors += 1 }
        }
    }

    func snapshot(connected: Bool, state reason: String?) -> SharedTierStatistics {
        var statistics = state.withLockedValue { $0 }
        statistics.connected = connected
        statistics.state = reason
        return statistics
    }
}
