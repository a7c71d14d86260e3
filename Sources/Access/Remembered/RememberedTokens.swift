#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import NIOConcurrencyHelpers

/// Verified tokens (CONTRACT §8.6): a client reusing its token pays a short hash, one table look-up and one
/// byte comparison under a lock, not a signature check. At most `capacity` tokens, each until its `exp` (plus the
/// leeway), and only under the key set that verified it.
///
/// The table is keyed by a hash of the token's last 32 bytes (its signature's end: as random as the signature)
/// and holds the whole token, which must match byte for byte: hashing all ~700 bytes would cost more than the
/// rest of the decision, and a made-up token that shares the tail of a remembered one only misses the table.
final class RememberedTokens: Sendable {
    struct Entry: Sendable {
        let token: String
        let grant: VerifiedToken
        let generation: Int
    }

    static let defaultCapacity = 10_000

    let capacity: Int
    private let table = NIOLockedValueBox<[Int: Entry]>([:])

    init(capacity: Int = defaultCapacity) {
        self.capacity = capacity
    }

    /// The remembered grant of `token` if it was verified under key set `generation` and is not past its time.
    func lookup(_ token: Substring, generation: Int, now: Double) -> VerifiedToken? {
        let slot = Self.slot(token)
        return table.withLockedValue { table in
            guard let entry = table[slot], Self.same(entry.token, token) else { return nil }
            guard entry.generation == generation, now < entry.grant.acceptedUntil else {
                table[slot] = nil
                return nil
            }
            return entry.grant
        }
    }

    /// Remembers a grant; when full, expired tokens go first, then an arbitrary one.
    func remember(_ token: String, _ grant: VerifiedToken, generation: Int, now: Double) {
        let slot = Self.slot(Substring(token))
        table.withLockedValue { table in
            if table.count >= capacity, table[slot] == nil {
                table = table.filter { $0.value.generation == generation && now < $0.value.grant.acceptedUntil }
                if table.count >= capacity, let any = table.keys.first { table[any] = nil }
            }
            table[slot] = Entry(token: token, grant: grant, generation: generation)
        }
    }

    /// The keys changed: nothing verified under the old ones is used again.
    func forgetAll() {
        table.withLockedValue { $0.removeAll() }
    }

    var count: Int { table.withLockedValue { $0.count } }

    private static func slot(_ token: Substring) -> Int {
        var hasher = Hasher()
        let tail = token.utf8.suffix(32)
        hasher.combine(token.utf8.count)
        if tail.withContiguousStorageIfAvailable({ hasher.combine(bytes: UnsafeRawBufferPointer($0)) }) == nil {
            for byte in tail { hasher.combine(byte) }
        }
        return hasher.finalize()
    }

    /// Byte equality, with `memcmp` speed when both are contiguous (they are: header values and our copies).
    private static func same(_ stored: String, _ token: Substring) -> Bool {
        guard stored.utf8.count == token.utf8.count else { return false }
        let fast = stored.utf8.withContiguousStorageIfAvailable { a in
            token.utf8.withContiguousStorageIfAvailable { b in
                guard let x = a.baseAddress, let y = b.baseAddress else { return a.count == b.count }
                return memcmp(x, y, a.count) == 0
            }
        }
        return (fast ?? nil) ?? stored.utf8.elementsEqual(token.utf8)
    }
}
