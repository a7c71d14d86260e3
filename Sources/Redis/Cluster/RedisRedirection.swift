/// What a cluster node answers for a key it does not serve now: `-MOVED slot host:port` (the slot lives there now),
/// `-ASK slot host:port` (the slot is migrating there: ask it once, after `ASKING`), `-TRYAGAIN` (a multi-key command
/// while the keys are being moved: retry in a moment).
enum RedisRedirection: Sendable, Hashable {
    case moved(slot: Int, to: RedisEndpoint.Address)
    case ask(slot: Int, to: RedisEndpoint.Address)
    case tryAgain

    /// The redirection `reply` is; nil for any other reply. An empty host (`MOVED 3999 :6381`: the node knows no
    /// address for it) is `askedHost`'s, the node that answered.
    init?(_ reply: RedisReply, askedHost: String) {
        guard let error = reply.errorReply else { return nil }
        switch error.kind {
        case .tryAgain:
            self = .tryAgain
        case .moved, .ask:
            let words = error.message.split(separator: " ")
            guard words.count == 3, let slot = Int(words[1]), (0..<RedisHashSlot.count).contains(slot),
                let colon = words[2].lastIndex(of: ":"), let port = Int(words[2][words[2].index(after: colon)...])
            else { return nil }
            var host = String(words[2][..<colon])
            if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
            if host.isEmpty { host = askedHost }
            guard let address = try? RedisEndpoint.Address.named(host: host, port: port, by: "a cluster node") else {
                return nil
            }
            self = error.kind == .moved ? .moved(slot: slot, to: address) : .ask(slot: slot, to: address)
        default:
            return nil
        }
    }
}
