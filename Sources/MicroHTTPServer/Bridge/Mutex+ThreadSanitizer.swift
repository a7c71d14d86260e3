import CMicroHTTPDShim
import Synchronization

// The server's shared state is in NIOLockedValueBox (a pthread lock, which ThreadSanitizer sees). A Mutex stored
// inline in a per-request object saves that object's allocation; ThreadSanitizer does not see inside
// Synchronization.Mutex on Linux, so its holds are announced.
extension Mutex where Value: Sendable {
    /// `withLock`, announced to ThreadSanitizer at `owner`'s address (no-ops outside `--sanitize=thread`).
    func withLock<Result: Sendable>(announcingTo owner: AnyObject, _ body: (inout Value) -> Result) -> Result {
        let address = Unmanaged.passUnretained(owner).toOpaque()
        return withLock { value in
            unicache_tsan_acquire(address)
            defer { unicache_tsan_release(address) }
            return body(&value)
        }
    }
}
