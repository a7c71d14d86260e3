import UnifiedCache

/// One message on the invalidation channel: `ORIGIN|SEQUENCE|KIND|PAYLOAD`, where KIND is `key`, `prefix`,
/// `user`, `ns` (payload `USER|NS1,NS2`) or `all`. Users, keys and namespace names never contain `|`.
struct InvalidationMessage: Sendable, Equatable {
    var origin: String
    var sequence: Int
    var scope: SharedScope

    /// The message without its sequence number (the Lua script that `INCR`s it inserts it): `KIND|PAYLOAD`.
    static func body(_ scope: SharedScope) -> String {
        switch scope {
        case .key(let key): "key|" + key
        case .prefix(let prefix): "prefix|" + prefix
        case .user(let user): "user|" + user
        case .namespaces(let namespaces, let user): "ns|" + user + "|" + namespaces.sorted().joined(separator: ",")
        case .all: "all|"
        }
    }

    init(origin: String, sequence: Int, scope: SharedScope) {
        self.origin = origin
        self.sequence = sequence
        self.scope = scope
    }

    /// `nil` for anything that is not a well-formed message (counted by the caller, otherwise ignored).
    init?(_ bytes: [UInt8]) {
        guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
        let parts = text.split(separator: "|", maxSplits: 3, omittingEmptySubsequences: false)
        guard parts.count == 4, let sequence = Int(parts[1]) else { return nil }
        let payload = String(parts[3])
        switch parts[2] {
        case "key" where !payload.isEmpty: scope = .key(payload)
        case "prefix" where !payload.isEmpty: scope = .prefix(payload)
        case "user" where !payload.isEmpty: scope = .user(payload)
        case "all": scope = .all
        case "ns":
            let fields = payload.split(separator: "|", maxSplits: 1, omittingEmptySubsequences: false)
            guard fields.count == 2, !fields[0].isEmpty else { return nil }
            scope = .namespaces(Set(fields[1].split(separator: ",").map(String.init)), user: String(fields[0]))
        default: return nil
        }
        origin = String(parts[0])
        self.sequence = sequence
    }
}
