import Foundation

/// Runs `body` on a thread of its own and returns what it returns (or throws): for blocking work in async test code
/// (a socket's `recv` or `connect`, a child process's `waitUntilExit`, a read from its pipe). On a thread of Swift's
/// cooperative pool (two on a 2-core machine) such a call holds every other async test running beside it until it
/// returns, up to the blocking call's own timeout.
public func onThread<T: Sendable, E: Error>(_ body: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
    let result: Result<T, E> = await withCheckedContinuation { continuation in
        let thread = Thread { continuation.resume(returning: Result(catching: body)) }
        thread.stackSize = 512 << 10
        thread.start()
    }
    return try result.get()
}
