import Dispatch
import NIOConcurrencyHelpers

/// Holds waiters until released: `wait()` suspends until `open()` (or until the waiting task is cancelled), so a
/// test lets a held answer, store or listing go exactly when it wants, without sleeping. `close()` holds the waiters
/// that come after it again. The lock is NIO's pthread one: ThreadSanitizer understands it (`Mutex` it does not).
public final class Latch: Sendable {
    private struct State {
        var isOpen: Bool
        var nextID = 0
        var waiters: [Int: CheckedContinuation<Void, Never>] = [:]
        var blocked: [DispatchSemaphore] = []
    }

    private let state: NIOLockedValueBox<State>

    /// `open`: whether waiters pass until `close()`.
    public init(open: Bool = false) { state = NIOLockedValueBox(State(isOpen: open)) }

    public var isOpen: Bool { state.withLockedValue { $0.isOpen } }

    /// Releases every current waiter, and every later one until `close()`.
    public func open() {
        let (waiters, blocked) = state.withLockedValue { state in
            state.isOpen = true
            defer { (state.waiters, state.blocked) = ([:], []) }
            return (state.waiters, state.blocked)
        }
        for waiter in waiters.values { waiter.resume() }
        for thread in blocked { thread.signal() }
    }

    /// Holds the waiters that come from now on (until the next `open()`).
    public func close() { state.withLockedValue { $0.isOpen = false } }

    /// Returns once the latch is open, or once the calling task is cancelled (check `Task.isCancelled` to tell).
    public func wait() async {
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
            state.withLockedValue { $0.waiters.removeValue(forKey: id) }?.resume()
        }
    }

    /// Blocks the calling thread until the latch is open: for synchronous code the test holds (a file system call on
    /// the disk tier's own thread), never for a task.
    public func blockingWait() {
        let semaphore = DispatchSemaphore(value: 0)
        let passes = state.withLockedValue { state in
            if state.isOpen { return true }
            state.blocked.append(semaphore)
            return false
        }
        if !passes { semaphore.wait() }
    }
}
