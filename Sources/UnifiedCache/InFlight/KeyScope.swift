/// Which keys an invalidation covers; applied alike to in-flight loads, memory and disk.
public struct KeyScope: Sendable {
    /// The fleet's scope is the same: one scope travels from an invalidation here to the shared tier and back.
    public typealias Kind = SharedScope

    public let kind: Kind
    /// A user's scope also covers the entries without a user whose key names them (raw entries under a read-through
    /// key, stored before such puts were refused).
    public var userKeys = UserKeys()
    /// Only the keys of this shard (a shard's reset), nil: every key.
    public var shard: SharedShard?

    public init(kind: Kind, userKeys: UserKeys = UserKeys(), shard: SharedShard? = nil) {
        self.kind = kind
        self.userKeys = userKeys
        self.shard = shard
    }

    /// `key` is read only when the scope needs it, and the user is compared before the namespace is hashed: a scan of
    /// the memory tier or the disk index for one user's scope then reads two short strings of most entries.
    public func matches(key: @autoclosure () -> String, namespace: String, user: String?) -> Bool {
        if let shard, !shard.contains(key()) { return false }
        return switch kind {
        case .key(let wanted): key() == wanted
        case .prefix(let prefix): key().hasPrefix(prefix)
        case .namespaces(let namespaces, let wantedUser): user == wantedUser && namespaces.contains(namespace)
        case .user(let wanted): user == wanted || (user == nil && userKeys.key(key(), names: wanted))
        case .all: true
        }
    }

    public func matches(_ metadata: CacheEntryMetadata) -> Bool {
        matches(key: metadata.key, namespace: metadata.namespace, user: metadata.user)
    }
}
