import Synchronization

/// Verified tokens by their exact text (CONTRACT §8.6): a client reusing its token pays one hash and one
/// comparison under a lock, not a signature check. At most `capacity` tokens, each until its `exp` (plus the
/// leeway), and only under the key set that verified it.
///
/// Keyed by the token itself rather than a digest of it: Swift's per-process seeded SipHash is cheaper than
/// SHA-256 over ~700 bytes, and an exact comparison leaves no collision to reason about (10,000 tokens of
/// ~1 KiB hold ~10 MiB at most).
final class RememberedTokens: Sendable {
    struct Entry: Sendable {
        let token: VerifiedToken
        let generation: Int
    }

    static let defaultCapacity = 10_000

    let capacity: Int
    private let table = Mutex<[String: Entry]>([:])

    init(capacity: Int = defaultCapacity) {
        self.capacity = capacity
    }

    /// The remembered grant of `token` if it was verified under key set `generation` and is not past its time.
    func lookup(_ token: String, generation: Int, now: Double) -> VerifiedToken? {
        table.withLock { table in
            guard let entry = table[token] else { return nil }
            guard entry.generation == generation, now < entry.token.acceptedUntil else {
                table[token] = nil
                return nil
            }
            return entry.token
        }
    }

    /// Remembers a grant; when full, expired tokens go first, then an arbitrary one.
    func remember(_ token: String, _ verified: VerifiedToken, generation: Int, now: Double) {
        table.withLock { table in
            if table.count >= capacity, table[token] == nil {
                table = table.filter { $0.value.generation == generation && now < $0.value.token.acceptedUntil }
                if table.count >= capacity, let any = table.keys.first { table[any] = nil }
            }
            table[token] = Entry(token: verified, generation: generation)
        }
    }

    /// The keys changed: nothing verified under the old ones is used again.
    func forgetAll() {
        table.withLock { $0.removeAll() }
    }

    var count: Int { table.withLock { $0.count } }
}
