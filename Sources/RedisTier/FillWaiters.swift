import Dispatch
import NIOConcurrencyHelpers

/// Requests of this instance waiting for another instance to fill a key: woken by the fill's message on the
/// invalidation channel, or after a poll interval at the latest (a message can be lost; Redis is then asked).
final class FillWaiters: Sendable {
    private struct State {
        var next: UInt64 = 0
        var waiting: [String: [UInt64: CheckedContinuation<Void, Never>]] = [:]
    }

    private let state = NIOLockedValueBox(State())

    /// Returns when `key` is announced, everything is woken, or `atMost` has passed.
    func wait(for key: String, atMost: Duration) async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            let id = state.withLockedValue { state in
                state.next &+= 1
                state.waiting[key, default: [:]][state.next] = continuation
                return state.next
            }
            let nanoseconds = atMost.components.seconds * 1_000_000_000 + atMost.components.attoseconds / 1_000_000_000
            DispatchQueue.global().asyncAfter(deadline: .now() + .nanoseconds(Int(nanoseconds))) {
                self.resume(key, id: id)
            }
        }
    }

    /// Wakes the waiters of `key`.
    func wake(_ key: String) {
        let woken = state.withLockedValue { $0.waiting.removeValue(forKey: key) }
        woken?.values.forEach { $0.resume() }
    }

    /// Wakes every waiter (a prefix, user or full invalidation, or a reset).
    func wakeAll() {
        let woken = state.withLockedValue { state in
            defer { state.waiting.removeAll() }
            return state.waiting.values.flatMap(\.values)
        }
        woken.forEach { $0.resume() }
    }

    private func resume(_ key: String, id: UInt64) {
        let continuation = state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
            let taken = state.waiting[key]?.removeValue(forKey: id)
            if state.waiting[key]?.isEmpty == true { state.waiting.removeValue(forKey: key) }
            return taken
        }
        continuation?.resume()
    }
}
