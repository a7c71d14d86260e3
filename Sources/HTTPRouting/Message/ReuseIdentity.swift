/// Names one reusable response (`Response.reusable()`), so that a server may key its own prepared form of the
/// response on it. 128 random bits: two responses never share one, and no counter is shared between the threads
/// that make them.
public struct ReuseIdentity: Hashable, Sendable {
    public let high: UInt64
    public let low: UInt64

    init() {
        var random = SystemRandomNumberGenerator()
        high = random.next()
        low = random.next()
    }
}
