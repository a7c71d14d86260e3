import NIOConcurrencyHelpers

/// Verified tokens (CONTRACT §8.6): a client reusing its token pays a short hash, one table look-up and one
/// byte comparison under a lock, not a signature check. At most `capacity` tokens, each until its `exp` (plus the
/// leeway), and only under the key set that verified it.
///
/// The table is keyed by the token's last 16 bytes (its signature's end: as random as the signature) and its
/// length, and holds the whole token, which must match byte for byte: hashing all ~500 bytes would cost more than
/// the rest of the decision, and a made-up token that shares the tail of a remembered one only misses the table.
final class RememberedTokens: Sendable {
    struct Entry: Sendable {
        let token: [UInt8]
        let grant: VerifiedToken
        let generation: Int
        /// Which remember made it: its place in the insertion ring is `order % capacity`.
        let order: Int
    }

    /// The table and the order its entries came in. When full, the oldest remembered token goes (first in, first
    /// out): one ring slot looked at per new token, never a scan of the table (CONTRACT §8.9).
    private struct State {
        var table: [Int: Entry] = [:]
        /// For each ring position, the table slot and order of the entry put there (stale once that entry left).
        var ring: [(slot: Int, order: Int)]
        var nextOrder = 0

        init(capacity: Int) { ring = Array(repeating: (slot: 0, order: -1), count: capacity) }
    }

    static let defaultCapacity = 10_000

    let capacity: Int
    private let state: NIOLockedValueBox<State>

    init(capacity: Int = defaultCapacity) {
        self.capacity = max(capacity, 1)
        state = NIOLockedValueBox(State(capacity: max(capacity, 1)))
    }

    /// The remembered grant of `token` if it was verified under key set `generation` and is not past its time.
    func lookup(_ token: BearerToken.Token, generation: Int, now: Double) -> VerifiedToken? {
        // The token's bytes in place: hashed and compared without a copy.
        token.withBytes { bytes in
            let slot = Self.slot(bytes)
            return state.withLockedValue { state in
                guard let entry = state.table[slot],
                      entry.token.withUnsafeBufferPointer({ BytewiseEquality.equal($0, bytes) })
                else { return nil }
                guard entry.generation == generation, now < entry.grant.acceptedUntil else {
                    state.table[slot] = nil
                    return nil
                }
                return entry.grant
            }
        }
    }

    /// Remembers a grant; when full, the token remembered longest ago is forgotten to make room. Every live entry
    /// holds its own ring position, so the table never outgrows the ring.
    func remember(_ token: String, _ grant: VerifiedToken, generation: Int) {
        let token = Array(token.utf8)
        let slot = token.withUnsafeBufferPointer(Self.slot)
        state.withLockedValue { state in
            let order = state.nextOrder
            state.nextOrder += 1
            let position = order % capacity
            let previous = state.ring[position]
            if previous.order >= 0, state.table[previous.slot]?.order == previous.order {
                state.table[previous.slot] = nil
            }
            state.ring[position] = (slot, order)
            state.table[slot] = Entry(token: token, grant: grant, generation: generation, order: order)
        }
    }

    /// The keys changed: nothing verified under the old ones is used again.
    func forgetAll() {
        state.withLockedValue { $0.table.removeAll() }
    }

    var count: Int { state.withLockedValue { $0.table.count } }

    /// The token's last 16 bytes (its signature's end, 96 random bits in base64url) and its length, folded into
    /// one word: the table's own hashing spreads it.
    private static func slot(_ token: UnsafeBufferPointer<UInt8>) -> Int {
        let tail = UnsafeRawBufferPointer(UnsafeBufferPointer(rebasing: token.suffix(16)))
        var words: (UInt64, UInt64) = (0, 0)
        withUnsafeMutableBytes(of: &words) { $0.copyMemory(from: tail) }
        return Int(bitPattern: UInt(words.0 ^ (words.1 &* 0x9E37_79B9_7F4A_7C15) ^ UInt64(token.count)))
    }
}
