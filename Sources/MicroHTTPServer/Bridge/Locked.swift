import CMicroHTTPDShim
import Synchronization

/// A `Mutex` whose acquire/release are announced to ThreadSanitizer: TSan does not see inside
/// Synchronization.Mutex on Linux and would report false races on state shared with the MHD thread.
/// The annotations compile to no-ops outside `--sanitize=thread`.
final class Locked<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    init(_ value: sending Value) {
        mutex = Mutex(value)
    }

    func withLock<Result: Sendable>(_ body: (inout Value) throws -> Result) rethrows -> Result {
        let address = Unmanaged.passUnretained(self).toOpaque()
        return try mutex.withLock { value in
            unicache_tsan_acquire(address)
            defer { unicache_tsan_release(address) }
            return try body(&value)
        }
    }
}

extension Mutex where Value: Sendable {
    /// `withLock`, announced to ThreadSanitizer at `owner`'s address: for a Mutex stored inline in a
    /// per-request object, where a separate `Locked` object would cost an allocation per request.
    func withLock<Result: Sendable>(announcingTo owner: AnyObject, _ body: (inout Value) -> Result) -> Result {
        let address = Unmanaged.passUnretained(owner).toOpaque()
        return withLock { value in
            unicache_tsan_acquire(address)
            defer { unicache_tsan_release(address) }
            return body(&value)
        }
    }
}
