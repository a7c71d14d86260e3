import Foundation
import NIOConcurrencyHelpers

/// Runs `body` on a thread of its own and returns what it returns (or throws): for blocking work in async test code
/// (a socket's `recv` or `connect`, a child process's `waitUntilExit`, a read from its pipe). On a thread of Swift's
/// cooperative pool (two on a 2-core machine) such a call holds every other async test running beside it until it
/// returns, up to the blocking call's own timeout.
public func onThread<T: Sendable, E: Error>(_ body: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
    try await ThreadTask(body).value
}

/// Blocking work begun on a thread of its own when made, its result awaited later without holding a thread of the
/// cooperative pool: for a client whose pace must start now, not when a busy pool gets round to a child task.
public final class ThreadTask<T: Sendable, E: Error>: Sendable {
    private enum State {
        case running([CheckedContinuation<Result<T, E>, Never>])
        case done(Result<T, E>)
    }

    private let state = NIOLockedValueBox(State.running([]))

    public init(_ body: @escaping @Sendable () throws(E) -> T) {
        let thread = Thread { [state] in
            let result = Result(catching: body)
            let waiters = state.withLockedValue { state in
                defer { state = .done(result) }
                if case .running(let waiters) = state { return waiters }
                return []
            }
            for waiter in waiters { waiter.resume(returning: result) }
        }
        thread.stackSize = 512 << 10
        thread.start()
    }

    /// What the work returned (or threw), once it has ended.
    public var value: T {
        get async throws(E) {
            let result = await withCheckedContinuation { (continuation: CheckedContinuation<Result<T, E>, Never>) in
                let done: Result<T, E>? = state.withLockedValue { state in
                    switch state {
                    case .done(let result): return result
                    case .running(let waiters):
                        state = .running(waiters + [continuation])
                        return nil
                    }
                }
                if let done { continuation.resume(returning: done) }
            }
            return try result.get()
        }
    }
}
