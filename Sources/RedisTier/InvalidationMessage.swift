import UnifiedCache

/// One message on the invalidation channel: `ORIGIN|POSITION|KIND|PAYLOAD`, where POSITION is the change's id in
/// the fleet's log and KIND is `key`, `stored`, `prefix`, `user`, `ns` (payload `USER|NS1,NS2`) or `all`. The log's
/// entry of the same change holds `ORIGIN|KIND|PAYLOAD` under its id. Users, keys and namespace names never contain
/// `|`. `stored` is a newly fetched value that replaces the key's older copies (`SharedTierEvent.replaced`); every
/// other kind is an invalidation.
struct InvalidationMessage: Sendable, Equatable {
    /// How a store is announced: a raw put as `key` (it supersedes loads in flight elsewhere, as a delete does), a
    /// fetched value as `stored`.
    enum StoreKind: String {
        case put = "key"
        case fetched = "stored"
    }

    var origin: String
    var position: LogPosition
    /// What the receiving instances apply: `.invalidate` or `.replaced`, never `.reset`.
    var event: SharedTierEvent

    /// The one key the change concerns, if it concerns one.
    var key: String? {
        switch event {
        case .invalidate(.key(let key)), .replaced(let key): key
        default: nil
        }
    }

    /// The message without its origin and position (the Lua script that logs it inserts them): `KIND|PAYLOAD`.
    static func body(_ scope: SharedScope) -> String {
        switch scope {
        case .key(let key): StoreKind.put.rawValue + "|" + key
        case .prefix(let prefix): "prefix|" + prefix
        case .user(let user): "user|" + user
        case .namespaces(let namespaces, let user): "ns|" + user + "|" + namespaces.sorted().joined(separator: ",")
        case .all: "all|"
        }
    }

    init(origin: String, position: LogPosition, event: SharedTierEvent) {
        self.origin = origin
        self.position = position
        self.event = event
    }

    init(origin: String, position: LogPosition, scope: SharedScope) {
        self.init(origin: origin, position: position, event: .invalidate(scope))
    }

    /// A channel message; `nil` for anything that is not well-formed (counted by the caller, otherwise ignored).
    init?(_ bytes: [UInt8]) {
        guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
        let parts = text.split(separator: "|", maxSplits: 2, omittingEmptySubsequences: false)
        guard parts.count == 3, let position = LogPosition(parts[1]) else { return nil }
        self.init(origin: String(parts[0]), position: position, change: parts[2])
    }

    /// A log entry's change (`ORIGIN|KIND|PAYLOAD`) at `position`; `nil` when it is not well-formed.
    init?(position: LogPosition, entry bytes: [UInt8]) {
        guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
        let parts = text.split(separator: "|", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        self.init(origin: String(parts[0]), position: position, change: parts[1])
    }

    /// `KIND|PAYLOAD` parsed.
    private init?(origin: String, position: LogPosition, change: Substring) {
        let parts = change.split(separator: "|", maxSplits: 1, omittingEmptySubsequences: false)
        guard parts.count == 2 else { return nil }
        let payload = String(parts[1])
        let scope: SharedScope
        switch parts[0] {
        case StoreKind.fetched.rawValue where !payload.isEmpty:
            self.init(origin: origin, position: position, event: .replaced(payload))
            return
        case StoreKind.put.rawValue where !payload.isEmpty: scope = .key(payload)
        case "prefix" where !payload.isEmpty: scope = .prefix(payload)
        case "user" where !payload.isEmpty: scope = .user(payload)
        case "all": scope = .all
        case "ns":
            let fields = payload.split(separator: "|", maxSplits: 1, omittingEmptySubsequences: false)
            guard fields.count == 2, !fields[0].isEmpty else { return nil }
            scope = .namespaces(Set(fields[1].split(separator: ",").map(String.init)), user: String(fields[0]))
        default: return nil
        }
        self.init(origin: origin, position: position, scope: scope)
    }
}
