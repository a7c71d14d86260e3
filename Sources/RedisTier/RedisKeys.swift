import UnifiedCache

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
/// On a Redis Cluster (CONTRACT §13) the fleet's keys are divided into `shards` fixed shards (by `SharedShard`, a hash
/// of the cache key), and every name of shard N carries the hash tag `{sN}` right after the prefix, so that one shard
/// is one slot and every script touches one slot: `unicache:{s7}subscription:alice`, `unicache:{s7}#lock:KEY`,
/// `unicache:{s7}#user:USER` (the user's keys of that shard), `unicache:{s7}#log`, `unicache:{s7}#epoch` and the
/// sharded channel `unicache:{s7}inval`. With one shard (one Redis, Sentinel) the names are the ones above.
struct RedisKeys: Sendable {
    let prefix: String
    /// 1 on one Redis; a cluster's fixed number of shards.
    let shards: Int
    /// Each shard's `shardPrefix`, made once, and as bytes: a shared hit's `GET` names its entry without joining
    /// strings.
    private let shardPrefixes: [String]
    private let shardPrefixBytes: [[UInt8]]

    init(prefix: String, shards: Int = 1) {
        self.prefix = prefix
        self.shards = max(1, shards)
        shardPrefixes = self.shards == 1 ? [prefix] : (0..<self.shards).map { prefix + "{s\($0)}" }
        shardPrefixBytes = shardPrefixes.map { Array($0.utf8) }
    }

    /// The shard of `key`'s entry (0 with one shard).
    func shard(of key: String) -> Int { SharedShard.index(of: key, count: shards) }

    /// What every name of `shard` starts with: the prefix, and on a cluster the shard's hash tag.
    func shardPrefix(_ shard: Int) -> String { shardPrefixes[shards == 1 ? 0 : shard] }

    func entry(_ key: String) -> String { shardPrefix(shard(of: key)) + key }
    /// What `entry(key)` starts with, as bytes made once: a shared hit's `GET` carries them and the key, joined only
    /// as the command is written (the joined string and its copy into the command were two allocations, then one).
    func entryHead(_ key: String) -> [UInt8] { shardPrefixBytes[shard(of: key)] }
    func lock(_ key: String) -> String { shardPrefix(shard(of: key)) + "#lock:" + key }
    /// The hash of a user's cache keys (field) and their namespaces (value) in `shard`: erasure needs no scan.
    func userIndex(_ user: String, shard: Int) -> String {
        shards == 1 ? prefix + "#user:{" + user + "}" : shardPrefix(shard) + "#user:" + user
    }
    /// A shard's invalidation log: a stream of every change, trimmed to a bounded length (CONTRACT §6.6).
    func log(_ shard: Int) -> String { shardPrefix(shard) + "#log" }
    /// A random value set once per Redis lifetime (per shard on a cluster): a Redis that restarted empty has another.
    func epoch(_ shard: Int) -> String { shardPrefix(shard) + "#epoch" }
    /// A shard's invalidation channel (sharded, `SPUBLISH`, on a cluster).
    func channel(_ shard: Int) -> String { shardPrefix(shard) + "inval" }

    /// The cache key `name` is the entry of, nil for the tier's own keys and names of no shard.
    func cacheKey(ofEntry name: String) -> String? {
        guard name.hasPrefix(prefix) else { return nil }
        var rest = name.dropFirst(prefix.count)
        if shards > 1 {
            guard rest.hasPrefix("{s"), let close = rest.firstIndex(of: "}") else { return nil }
            rest = rest[rest.index(after: close)...]
        }
        return rest.hasPrefix("#") ? nil : String(rest)
    }

    /// A domain's fleet-wide request log (sorted set of grant times in ms). The domain is the hash tag, so that the
    /// budget's script, which also reads a user's log (`userRate`), touches one slot (Redis Cluster, CONTRACT §13).
    func rate(_ domain: String) -> String { prefix + "#rate:{" + domain + "}" }
    /// One user's grants within a domain's budget (CONTRACT §15.2): a sorted set like the domain's, whose name
    /// begins with the domain's (and so has its hash tag and its slot).
    func userRate(_ domain: String, user: String) -> String { rate(domain) + ":user:" + user }
    /// The fleet's instances (sorted set: instance → when its announcement expires, ms).
    var instances: String { prefix + "#instances" }

    /// `SCAN … MATCH` pattern of the entries whose cache key starts with `keyPrefix` (glob characters escaped; on a
    /// cluster any shard's tag between, so the caller checks each name with `cacheKey(ofEntry:)`).
    func entryPattern(keyPrefix: String) -> String {
        Self.globEscaped(prefix) + (shards == 1 ? "" : "{s*}") + Self.globEscaped(keyPrefix) + "*"
    }

    /// A SCAN glob for the entries whose cache key contains `text` (a superset: the caller filters).
    func entryPattern(containing text: String) -> String {
        entryPattern(keyPrefix: "") + Self.globEscaped(text) + "*"
    }

    static func globEscaped(_ text: String) -> String {
        var out = ""
        for character in text {
            if "*?[]\\".contains(character) { out.append("\\") }
            out.append(character)
        }
        return out
    }
}
