/// Names one reusable response (`Response.reusable()`), so that a server may key its own prepared form of the
/// response on it. An identity is a token object of its own: two responses never share one while either is kept
/// (its address is not reused while any copy of the identity holds it), and making one is an allocation, not a
/// system call (128 random bits cost two `getrandom` calls per shared hit) nor a counter shared between threads.
public struct ReuseIdentity: Hashable, Sendable {
    private final class Token: Sendable {}

    private let token = Token()

    init() {}

    /// Spreads identities over a direct-mapped table: the token's address, multiplied by 2⁶⁴/φ (Fibonacci hashing),
    /// high bits first.
    public var spread: UInt64 {
        UInt64(UInt(bitPattern: ObjectIdentifier(token))) &* 0x9E37_79B9_7F4A_7C15
    }

    public static func == (lhs: ReuseIdentity, rhs: ReuseIdentity) -> Bool { lhs.token === rhs.token }

    public func hash(into hasher: inout Hasher) { hasher.combine(ObjectIdentifier(token)) }
}
