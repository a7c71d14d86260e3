/// The names the shared tier uses in Redis, all under one prefix (`--redis-prefix`, `unicache:` by default).
///
/// An entry's Redis key is the prefix and the cache key verbatim (`unicache:subscription:alice`). Cache keys are
/// `[A-Za-z0-9._:,@-]`, so the tier's own keys carry a `#` after the prefix and can never collide with one:
/// `unicache:#log`, `unicache:#epoch`, `unicache:#lock:KEY`, `unicache:#user:{alice}`.
struct RedisKeys: Sendable {
    let prefix: String

    func entry(_ key: String) -> String { prefix + key }
    func lock(_ key: String) -> String { prefix + "#lock:" + key }
    /// The hash of a user's cache keys (field) and their namespaces (value): erasure needs no scan.
    func userIndex(_ user: String) -> String { prefix + "#user:{" + user + "}" }
    /// The fleet's invalidation log: a stream of every change, trimmed to a bounded length (CONTRACT §6.6).
    var log: String { prefix + "#log" }
    /// A random value set once per Redis lifetime: a Redis that restarted empty has another one.
    var epoch: String { prefix + "#epoch" }
    /// A domain's fleet-wide request log (sorted set of grant times in ms).
    func rate(_ domain: String) -> String { prefix + "#rate:" + domain }
    /// The fleet's instances (sorted set: instance → when its announcement expires, ms).
    var instances: String { prefix + "#instances" }
    /// The invalidation channel.
    var channel: String { prefix + "inval" }
    /// The tier's own keys all start with this.
    var internalPrefix: String { prefix + "#" }

    /// `SCAN … MATCH` pattern of the entries whose cache key starts with `keyPrefix` (the prefix's glob
    /// characters escaped; cache keys have none).
    func entryPattern(keyPrefix: String) -> String { Self.globEscaped(prefix) + keyPrefix + "*" }

    static func globEscaped(_ text: String) -> String {
        var out = ""
        for character in text {
            if "*?[]\\".contains(character) { out.append("\\") }
            out.append(character)
        }
        return out
    }
}
