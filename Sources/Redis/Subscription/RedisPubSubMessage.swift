/// A message a subscription delivers: RESP2 pushes `message` and `smessage` (a sharded channel's).
public struct RedisPubSubMessage: Sendable, Equatable {
    public var channel: String
    public var payload: [UInt8]
    /// True for a sharded channel's message (`SSUBSCRIBE`).
    package var isSharded: Bool

    public init(channel: String, payload: [UInt8], isSharded: Bool = false) {
        self.channel = channel
        self.payload = payload
        self.isSharded = isSharded
    }

    /// The message a reply is, or nil when it is a reply to a command (`subscribe` confirmations, `pong`, …).
    init?(_ reply: RedisReply) {
        guard let elements = reply.array, elements.count == 3, let kind = elements[0].text,
            kind == "message" || kind == "smessage", let channel = elements[1].text, let payload = elements[2].bytes
        else { return nil }
        self.init(channel: channel, payload: payload, isSharded: kind == "smessage")
    }
}
