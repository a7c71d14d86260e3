import NIOConcurrencyHelpers
import Synchronization

/// Counts requests MHD has started and not yet completed, so shutdown can wait until all answers are sent.
/// The count is an atomic (two per request on the MHD thread); the lock is taken only to hand over a waiter.
final class OpenRequests: Sendable {
    private struct Waiter {
        var continuation: CheckedContinuation<Void, Never>?
        var cancelled = false
    }

    private let open = Atomic<Int>(0)
    private let waiter = NIOLockedValueBox(Waiter())

    var count: Int { open.load(ordering: .acquiring) }

    func opened() {
        open.add(1, ordering: .relaxed)
    }

    func closed() {
        guard open.subtract(1, ordering: .acquiringAndReleasing).newValue == 0 else { return }
        takeWaiter()?.resume()
    }

    private func takeWaiter() -> CheckedContinuation<Void, Never>? {
        waiter.withLockedValue { waiter in
            defer { waiter.continuation = nil }
            return waiter.continuation
        }
    }

    /// Returns once no request is open, or when the calling task is cancelled. One waiter at a time.
    func waitUntilNoneOpen() async {
        waiter.withLockedValue { $0.cancelled = false }
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let cancelled = waiter.withLockedValue { waiter -> Bool in
                    if waiter.cancelled { return true }
                    waiter.continuation = continuation
                    return false
                }
                if cancelled { return continuation.resume() }
                // After registering: a `closed()` that reached zero before now found no waiter to resume.
                if count == 0 { takeWaiter()?.resume() }
            }
        } onCancel: {
            waiter.withLockedValue { waiter -> CheckedContinuation<Void, Never>? in
                waiter.cancelled = true
                defer { waiter.continuation = nil }
                return waiter.continuation
            }?.resume()
        }
    }
}
