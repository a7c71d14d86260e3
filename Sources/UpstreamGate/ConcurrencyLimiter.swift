import Clocks
import NIOConcurrencyHelpers
import UnifiedCache

/// At most `limit` requests in flight to one upstream; more wait in order until a slot frees or their deadline
/// passes (never an unbounded wait). Background work yields: a freed slot goes to a waiting foreground request
/// first, and background work never takes a slot while foreground requests wait.
final class ConcurrencyLimiter: Sendable {
    private struct Waiter {
        var id: UInt64
        var continuation: CheckedContinuation<Bool, Never>
        var timer: Task<Void, Never>?
    }

    private struct State {
        var inFlight = 0
        var foreground: [Waiter] = []
        var background: [Waiter] = []
        var nextID: UInt64 = 0
        /// Waiters between deciding to wait and being queued, and those of them cancelled meanwhile.
        var arriving: Set<UInt64> = []
        var abandoned: Set<UInt64> = []
    }

    let limit: Int
    private let state = NIOLockedValueBox(State())

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    var inFlight: Int { state.withLockedValue { $0.inFlight } }

    /// Takes a slot, waiting until `deadline` at most; false when the deadline passed (or the task was cancelled).
    func acquire(background: Bool, deadline: Duration, clock: Elapsed) async -> Bool {
        let id = state.withLockedValue { state -> UInt64? in
            let ahead = state.foreground.count + (background ? state.background.count : 0)
            if ahead == 0 && state.inFlight < limit {
                state.inFlight += 1
                return nil
            }
            state.nextID += 1
            state.arriving.insert(state.nextID)
            return state.nextID
        }
        guard let id else { return true }
        return await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Bool, Never>) in
                let queued = state.withLockedValue { state -> Bool in
                    state.arriving.remove(id)
                    if state.abandoned.remove(id) != nil { return false }
                    // The slot may have freed while this task got here.
                    let ahead = state.foreground.count + (background ? state.background.count : 0)
                    if ahead == 0 && state.inFlight < limit {
                        state.inFlight += 1
                        continuation.resume(returning: true)
                        return true
                    }
                    let timer = clock.timer(at: deadline) { [weak self] in self?.expire(id) }  // cancelled: it got a slot
                    let waiter = Waiter(id: id, continuation: continuation, timer: timer)
                    if background { state.background.append(waiter) } else { state.foreground.append(waiter) }
                    return true
                }
                if !queued { continuation.resume(returning: false) }
            }
        } onCancel: {
            expire(id, cancelled: true)
        }
    }

    /// Gives a slot back: to the first foreground waiter, else the first background one.
    func release() {
        let next = state.withLockedValue { state -> Waiter? in
            if !state.foreground.isEmpty { return state.foreground.removeFirst() }
            if !state.background.isEmpty { return state.background.removeFirst() }
            state.inFlight -= 1
            return nil
        }
        guard let next else { return }
        next.timer?.cancel()
        next.continuation.resume(returning: true)  // the slot passes to it
    }

    /// A waiter's deadline passed or its task was cancelled: it leaves the queue without a slot (a cancelled one
    /// not queued yet leaves as it arrives).
    private func expire(_ id: UInt64, cancelled: Bool = false) {
        let waiter = state.withLockedValue { state -> Waiter? in
            if let index = state.foreground.firstIndex(where: { $0.id == id }) {
                return state.foreground.remove(at: index)
            }
            if let index = state.background.firstIndex(where: { $0.id == id }) {
                return state.background.remove(at: index)
            }
            if cancelled && state.arriving.contains(id) { state.abandoned.insert(id) }
            return nil
        }
        guard let waiter else { return }
        waiter.timer?.cancel()
        waiter.continuation.resume(returning: false)
    }
}
