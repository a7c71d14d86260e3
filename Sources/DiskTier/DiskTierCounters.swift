import NIOConcurrencyHelpers
import UnifiedCache

/// The tier's counters and fault state, readable without awaiting the tier (for /stats and /readyz).
final class DiskTierCounters: Sendable {
    private struct State {
        var statistics: SecondTierStatistics
        /// Set by a failed write, cleared by the next successful one.
        var writeFault: String?
        /// Set by a failed read (other than a missing file), cleared by the next successful one.
        var readFault: String?
        /// Some file could not be deleted (the tier never serves it).
        var holdsUndeletable = false
    }

    private let state: NIOLockedValueBox<State>

    init(limitBytes: Int) {
        var statistics = SecondTierStatistics()
        statistics.limitBytes = limitBytes
        state = NIOLockedValueBox(State(statistics: statistics))
    }

    var statistics: SecondTierStatistics { state.withLockedValue { $0.statistics } }

    var health: String? { state.withLockedValue { $0.writeFault ?? $0.readFault } }

    func setSize(entries: Int, bytes: Int, decisions: EvictionStatistics) {
        state.withLockedValue {
            $0.statistics.entries = entries
            $0.statistics.bytes = bytes
            // The tier counts its evictions itself: a rebuild starts a new index, and its policy's count, at 0.
            let evictions = $0.statistics.decisions.evictions
            $0.statistics.decisions = decisions
            $0.statistics.decisions.evictions = evictions
        }
    }

    func addEvictions(_ count: Int) { state.withLockedValue { $0.statistics.decisions.evictions += count } }
    func addCorrupt(_ count: Int) { state.withLockedValue { $0.statistics.corrupt += count } }
    func addUndecryptable(_ count: Int) { state.withLockedValue { $0.statistics.undecryptable += count } }

    /// Counts a failed write; returns `true` when the tier was healthy until now (log it once).
    @discardableResult
    func writeFailed(_ reason: String) -> Bool {
        failed(\.writeFault, counting: \.writeErrors, "disk tier cannot write: \(reason)")
    }

    /// Clears the write fault; returns `true` when there was one (log the recovery once).
    @discardableResult
    func writeSucceeded() -> Bool {
        state.withLockedValue { state in
            let wasFaulty = state.writeFault != nil
            state.writeFault = nil
            return wasFaulty
        }
    }

    /// Counts a failed read; returns `true` when no read had failed since the last good one (log it once).
    @discardableResult
    func readFailed(_ reason: String) -> Bool {
        failed(\.readFault, counting: \.readErrors, "disk tier cannot read: \(reason)")
    }

    /// Counts a failure and sets its fault; returns `true` when that fault was clear until now.
    private func failed(
        _ fault: WritableKeyPath<State, String?>, counting errors: WritableKeyPath<SecondTierStatistics, Int>,
        _ description: String
    ) -> Bool {
        state.withLockedValue { state in
            state.statistics[keyPath: errors] += 1
            let wasClear = state[keyPath: fault] == nil
            state[keyPath: fault] = description
            return wasClear
        }
    }

    func readSucceeded() { state.withLockedValue { $0.readFault = nil } }

    /// Whether a read on the caller's thread may answer: the tier is healthy and every file it holds may be served.
    var readsNow: Bool {
        state.withLockedValue { $0.writeFault == nil && $0.readFault == nil && !$0.holdsUndeletable }
    }

    func setHoldsUndeletable(_ holds: Bool) { state.withLockedValue { $0.holdsUndeletable = holds } }
}
