import NIOConcurrencyHelpers

/// A one-shot gate for tests: `wait()` suspends until `open()` (or the waiting task is cancelled).
/// Lets a test hold a fake upstream's answer back and release it exactly when it wants, no sleeps.
/// The lock is NIO's pthread-based `NIOLockedValueBox`, not `Synchronization.Mutex`: on Linux, Mutex's
/// futex is invisible to ThreadSanitizer, which then reports false races (checked with a two-thread counter),
/// and this gate must stay clean under `--sanitize=thread`.
final class Gate: Sendable {
    private struct State {
        var isOpen = false
        var nextID = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
    }

    private let state = NIOLockedValueBox(State())

    init() {}

    var isOpen: Bool { state.withLockedValue { $0.isOpen } }

    /// Releases every current and future waiter.
    func open() {
        let waiters = state.withLockedValue { state in
            state.isOpen = true
            defer { state.waiters = [:] }
            return state.waiters
        }
        for waiter in waiters.values { waiter.resume() }
    }

    /// Returns once the gate is open; throws `CancellationError` if the task is cancelled first.
    func wait() async throws {
        let id = state.withLockedValue { state in
            state.nextID += 1
            return state.nextID
        }
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let resumeNow = state.withLockedValue { state in
                    if state.isOpen || Task.isCancelled { return true }
                    state.waiters[id] = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            let waiter = state.withLockedValue { $0.waiters.removeValue(forKey: id) }
            waiter?.resume()
        }
        try Task.checkCancellation()
    }
}
