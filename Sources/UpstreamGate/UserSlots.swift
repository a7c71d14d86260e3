import Clocks
import NIOConcurrencyHelpers

/// One user's share of a domain's requests in flight (CONTRACT §15.2): at most `limit` of one user's fetches hold a
/// slot at once; that user's further fetches wait, in order, for one of their own to end (until their deadline),
/// while other users' pass. A user's limiter exists only while some fetch of theirs holds or waits for a slot.
final class UserSlots: Sendable {
    private struct Held {
        var limiter: ConcurrencyLimiter
        /// Fetches holding or waiting for one of this user's slots.
        var fetches: Int
    }

    let limit: Int
    private let users = NIOLockedValueBox<[String: Held]>([:])

    init(limit: Int) {
        self.limit = max(1, limit)
    }

    /// Takes one of `user`'s slots, waiting until `deadline` at most; false when it passed (or the task was cancelled).
    func acquire(_ user: String, deadline: Duration, clock: Elapsed) async -> Bool {
        let limiter = users.withLockedValue { users in
            var held = users[user] ?? Held(limiter: ConcurrencyLimiter(limit: limit), fetches: 0)
            held.fetches += 1
            users[user] = held
            return held.limiter
        }
        let acquired = await limiter.acquire(background: false, deadline: deadline, clock: clock)
        if !acquired { leave(user) }
        return acquired
    }

    /// Gives one of `user`'s slots back (to their next waiting fetch, if any).
    func release(_ user: String) {
        guard let limiter = users.withLockedValue({ $0[user]?.limiter }) else { return }
        limiter.release()
        leave(user)
    }

    /// Users with a fetch holding or waiting for a slot.
    var usersInFlight: Int { users.withLockedValue { $0.count } }

    private func leave(_ user: String) {
        users.withLockedValue { users in
            guard var held = users[user] else { return }
            held.fetches -= 1
            users[user] = held.fetches > 0 ? held : nil
        }
    }
}
