
/// Counts requests MHD has started and not yet completed, so shutdown can wait until all answers are sent.
final class OpenRequests: Sendable {
    private struct State {
        var count = 0
        var waiter: CheckedContinuation<Void, Never>?
        var waiterCancelled = false
    }

    private let state = Locked(State())

    var count: Int { state.withLock { $0.count } }

    func opened() {
        state.withLock { $0.count += 1 }
    }

    func closed() {
        let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
            state.count -= 1
            guard state.count == 0 else { return nil }
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    /// Returns once no request is open, or when the calling task is cancelled. One waiter at a time.
    func waitUntilNoneOpen() async {
        state.withLock { $0.waiterCancelled = false }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLock { state -> Bool in
                    if state.count == 0 || state.waiterCancelled { return true }
                    state.waiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLock { state -> CheckedContinuation<Void, Never>? in
                state.waiterCancelled = true
                defer { state.waiter = nil }
                return state.waiter
            }
            waiter?.resume()
        }
    }
}
