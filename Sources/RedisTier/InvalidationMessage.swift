import UnifiedCache

/// One change the fleet is told of, as it travels on the invalidation channel and in the fleet's log.
///
/// A message is fields joined by `|`, each field but the marker and the position percent-encoded (`MessageField`: no
/// field holds a raw `|`, so a user id or a key containing one is never read as two fields):
///
///     channel:   v2|ORIGIN|POSITION|KIND|FIELD…
///     log entry: v2|ORIGIN|KIND|FIELD…         (field `m` of the entry whose id is POSITION)
///
/// `v2` marks this format (the release before wrote `ORIGIN|POSITION|KIND|PAYLOAD`, with `|` unescaped), ORIGIN is
/// the sending instance, POSITION the change's id in the log (`MS-SEQ`), and KIND with its fields one of `key|KEY`,
/// `stored|KEY`, `prefix|PREFIX`, `user|USER`, `ns|USER|NAMESPACE…` (no namespace or several) or `all` (none). Every
/// field is non-empty. `stored` is a newly fetched value that replaces the key's older copies
/// (`SharedTierEvent.replaced`); every other kind is an invalidation.
///
/// Anything else (another marker or none, a field count the kind does not take, a field that is not well-formed) is
/// refused: the receiving instance cannot tell what it concerns, so it drops its local tiers rather than go on
/// serving what the change may have replaced (`RedisSharedTier.handle`, `replay`).
struct InvalidationMessage: Sendable, Equatable {
    /// This format's first field.
    static let marker = "v2"

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

    /// What the Lua scripts put before a change (`v2|ORIGIN`); they add the position on the channel.
    static func head(origin: String) -> String {
        marker + "|" + MessageField.encode(origin)
    }

    /// A change without its head and position (the Lua script that logs it inserts them): `KIND|FIELD…`.
    static func change(_ scope: SharedScope) -> String {
        switch scope {
        case .key(let key): fields(StoreKind.put.rawValue, [key])
        case .prefix(let prefix): fields("prefix", [prefix])
        case .user(let user): fields("user", [user])
        case .namespaces(let namespaces, let user): fields("ns", [user] + namespaces.sorted())
        case .all: "all"
        }
    }

    /// A stored value's change: `key|KEY` or `stored|KEY`.
    static func change(storing key: String, as kind: StoreKind) -> String {
        fields(kind.rawValue, [key])
    }

    private static func fields(_ kind: String, _ values: [String]) -> String {
        ([kind] + values.map(MessageField.encode)).joined(separator: "|")
    }

    init(origin: String, position: LogPosition, event: SharedTierEvent) {
        self.origin = origin
        self.position = position
        self.event = event
    }

    init(origin: String, position: LogPosition, scope: SharedScope) {
        self.init(origin: origin, position: position, event: .invalidate(scope))
    }

    /// A channel message; `nil` for anything that is not well-formed in this format.
    init?(_ bytes: [UInt8]) {
        guard let fields = Self.split(bytes), fields.count >= 4, let position = LogPosition(fields[2]) else { return nil }
        self.init(origin: fields[1], position: position, change: fields[3...])
    }

    /// A log entry's change at `position`; `nil` when it is not well-formed in this format.
    init?(position: LogPosition, entry bytes: [UInt8]) {
        guard let fields = Self.split(bytes), fields.count >= 3 else { return nil }
        self.init(origin: fields[1], position: position, change: fields[2...])
    }

    /// The text's fields, when it is UTF-8 and starts with this format's marker.
    private static func split(_ bytes: [UInt8]) -> [Substring]? {
        guard let text = String(validating: bytes, as: UTF8.self) else { return nil }
        let fields = text.split(separator: "|", omittingEmptySubsequences: false)
        guard fields.first.map(String.init) == marker else { return nil }
        return fields
    }

    /// `KIND|FIELD…` read: each field decoded and non-empty, as many as the kind takes.
    private init?(origin field: Substring, position: LogPosition, change: ArraySlice<Substring>) {
        guard let origin = MessageField.decode(field), !origin.isEmpty, let kind = change.first else { return nil }
        var values: [String] = []
        for field in change.dropFirst() {
            guard let value = MessageField.decode(field), !value.isEmpty else { return nil }
            values.append(value)
        }
        let event: SharedTierEvent
        switch (String(kind), values.count) {
        case (StoreKind.fetched.rawValue, 1): event = .replaced(values[0])
        case (StoreKind.put.rawValue, 1): event = .invalidate(.key(values[0]))
        case ("prefix", 1): event = .invalidate(.prefix(values[0]))
        case ("user", 1): event = .invalidate(.user(values[0]))
        case ("ns", 1...):
            let namespaces = Set(values.dropFirst())
            // A namespace named twice is no message this format writes.
            guard namespaces.count == values.count - 1 else { return nil }
            event = .invalidate(.namespaces(namespaces, user: values[0]))
        case ("all", 0): event = .invalidate(.all)
        default: return nil
        }
        self.init(origin: origin, position: position, event: event)
    }
}
