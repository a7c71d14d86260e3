/// A failover Sentinel announced: the group's primary moved from `old` to `new`.
package struct RedisSentinelSwitch: Sendable, Hashable {
    package var masterName: String
    public var old: RedisEndpoint.Address
    public var new: RedisEndpoint.Address

    public init(masterName: String, old: RedisEndpoint.Address, new: RedisEndpoint.Address) {
        self.masterName = masterName
        self.old = old
        self.new = new
    }

    /// The switch of `masterName`'s group a message announces: `+switch-master` (`NAME old-ip old-port new-ip
    /// new-port`) or `+promoted-slave` (`slave IP:PORT IP PORT @ NAME old-ip old-port`). Nil for another channel or
    /// another group; throws for an announcement of this group that is malformed or names a host that is neither a
    /// host name nor an address (the reason shows the text escaped).
    init?(channel: String, payload: [UInt8], masterName: String) throws(RedisError) {
        let words = String(decoding: payload, as: UTF8.self).split(separator: " ", omittingEmptySubsequences: false)
            .map(String.init)
        let malformed = RedisError.unexpectedReply(
            "a Sentinel's \(channel) announcement is malformed: \(String(decoding: payload, as: UTF8.self).escapedForLog)")
        switch channel {
        case "+switch-master":
            guard words.first == masterName else { return nil }
            guard words.count == 5 else { throw malformed }
            self.init(
                masterName: masterName, old: try .named(host: words[1], port: Int(words[2])),
                new: try .named(host: words[3], port: Int(words[4])))
        case "+promoted-slave":
            guard words.count == 8, words[4] == "@" else {
                guard words.contains(masterName) else { return nil }
                throw malformed
            }
            guard words[5] == masterName else { return nil }
            self.init(
                masterName: masterName, old: try .named(host: words[6], port: Int(words[7])),
                new: try .named(host: words[2], port: Int(words[3])))
        default:
            return nil
        }
    }
}
