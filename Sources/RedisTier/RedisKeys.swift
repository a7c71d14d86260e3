/// The names the shared tier uses in Redis, all under one prefix (`--redis-prefix`, `unicache:` by default).
///
/// An entry's Redis key is the prefix and the cache key verbatim (`unicache:subscription:alice`). A cache key never
/// starts with `#` (raw keys are `[A-Za-z0-9._:,@-]`, a read-through key starts with its namespace), so the tier's
/// own keys carry a `#` after the prefix and can never collide with one: `unicache:#log`, `unicache:#epoch`,
/// `unicache:#lock:KEY`, `unicache:#user:{USER}`, `unicache:#rate:{DOMAIN}`, `unicache:#rate:{DOMAIN}:user:USER`.
///
/// Names carry keys and user ids verbatim, `|` and `@` included (`unicache:#user:{auth0|abc}`): each kind of name is a
/// fixed text, the id, and a fixed end, so two ids never share a name, and no name is split again to find an id.
/// (A user id has no `{` or `}`: the whole id is the name's hash tag.) Messages, which do join fields, encode them
/// (`InvalidationMessage`).
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
    /// A domain's fleet-wide request log (sorted set of grant times in ms). The domain is the hash tag, so that the
    /// budget's script, which also reads a user's log (`userRate`), touches one slot (Redis Cluster, CONTRACT §13).
    func rate(_ domain: String) -> String { prefix + "#rate:{" + domain + "}" }
    /// One user's grants within a domain's budget (CONTRACT §15.2): a sorted set like the domain's, whose name
    /// begins with the domain's (and so has its hash tag and its slot).
    func userRate(_ domain: String, user: String) -> String { rate(domain) + ":user:" + user }
    /// The fleet's instances (sorted set: instance → when its announcement expires, ms).
    var instances: String { prefix + "#instances" }
    /// The invalidation channel.
    var channel: String { prefix + "inval" }
    /// The tier's own keys all start with this.
    var internalPrefix: String { prefix + "#" }

    /// `SCAN … MATCH` pattern of the entries whose cache key starts with `keyPrefix` (glob characters escaped).
    func entryPattern(keyPrefix: String) -> String { Self.globEscaped(prefix + keyPrefix) + "*" }

    static func globEscaped(_ text: String) -> String {
        var out = ""
        for character in text {
            if "*?[]\\".contains(character) { out.append("\\") }
            out.append(character)
        }
        return out
    }
}
