/// Keys that name a user by their shape: one of `prefixes` (`subscription:`, `health:today:`), then the user, alone
/// or before a `:` (`subscription:carol`, `health:today:carol:2026-11-29`). The app's read-through keys are such keys
/// (CONTRACT §3, §14.3): erasure of a user finds them by key as well as by the entry's user, so that a raw entry
/// stored under one (without a user) goes too. A user never contains `:`, so a key names at most one user.
public struct UserKeys: Sendable, Equatable {
    public let prefixes: [String]

    public init(prefixes: [String] = []) {
        self.prefixes = prefixes
    }

    /// The user `key` names: what follows its prefix, up to the next `:` or the end; nil when no prefix starts it or
    /// nothing follows the prefix.
    public func user(in key: String) -> Substring? {
        for prefix in prefixes where key.hasPrefix(prefix) {
            let rest = key.dropFirst(prefix.count)
            let user = rest.prefix { $0 != ":" }
            if !user.isEmpty { return user }
        }
        return nil
    }

    /// Whether `key` names `user`.
    public func key(_ key: String, names user: String) -> Bool {
        self.user(in: key).map { $0 == user } ?? false
    }
}
