/// A message a subscription delivers: RESP2 pushes `message`, `smessage` (sharded) and `pmessage` (pattern).
public struct RedisPubSubMessage: Sendable, Equatable {
    public var channel: String
    public var payload: [UInt8]
    /// The pattern that matched (`PSUBSCRIBE`), else nil.
    public var pattern: String?
    /// True for a sharded channel's message (`SSUBSCRIBE`).
    public var isSharded: Bool

    public init(channel: String, payload: [UInt8], pattern: String? = nil, isSharded: Bool = false) {
        self.channel = channel
        self.payload = payload
        self.pattern = pattern
        self.isSharded = isSharded
    }

    /// The message a reply is, or nil when it is a reply to a command (`subscribe` confirmations, `pong`, …).
    init?(_ value: RESPValue) {
        guard let elements = value.array, let kind = elements.first?.string else { return nil }
        switch (kind, elements.count) {
        case ("message", 3), ("smessage", 3):
            guard let channel = elements[1].string, let payload = elements[2].bytes else { return nil }
            self.init(channel: channel, payload: payload, isSharded: kind == "smessage")
        case ("pmessage", 4):
            guard let pattern = elements[1].string, let channel = elements[2].string, let payload = elements[3].bytes
            else { return nil }
            self.init(channel: channel, payload: payload, pattern: pattern)
        default:
            return nil
        }
    }
}
