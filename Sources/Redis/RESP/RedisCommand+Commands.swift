/// The commands the service sends, typed: the fleet's (`GET`, `SET … NX PX`, `DEL`, `HGETALL`, `SCAN`, `XRANGE`, and scripts by
/// `EVALSHA`, or `EVAL` when Redis lacks one) and the link's own (`AUTH`, `SELECT`, `PING`, `ROLE`, `SENTINEL
/// get-master-addr-by-name`, `SUBSCRIBE`; for Redis Cluster `CLUSTER SHARDS`, `CLUSTER SLOTS`, `ASKING` and
/// `SSUBSCRIBE`). What a script does inside Redis (`XADD`, `PUBLISH`, …) is the script's.
extension RedisCommand {
    public static func get(_ key: String) -> RedisCommand {
        get([], key)
    }

    /// `GET` of the key `head` + `tail`, joined only as it is written.
    public static func get(_ head: [UInt8], _ tail: String = "") -> RedisCommand {
        RedisCommand("GET", argument: head, tail)
    }

    /// `SET key value NX PX milliseconds`: stored only when the key is absent, expiring after `milliseconds`.
    public static func setIfAbsent(_ key: String, _ value: String, expiringAfter milliseconds: UInt64) -> RedisCommand {
        RedisCommand("SET", key, value, "NX", "PX", String(milliseconds))
    }

    public static func del(_ keys: [String]) -> RedisCommand {
        RedisCommand("DEL", arguments: keys.map { Array($0.utf8) })
    }

    /// A hash's fields and values, alternating.
    public static func hgetall(_ key: String) -> RedisCommand {
        RedisCommand("HGETALL", argument: Array(key.utf8))
    }

    /// `SCAN cursor MATCH pattern COUNT count`.
    public static func scan(cursor: String, match pattern: String, count: Int) -> RedisCommand {
        RedisCommand("SCAN", cursor, "MATCH", pattern, "COUNT", String(count))
    }

    /// `XRANGE key start end COUNT count`.
    public static func xrange(_ key: String, from start: String, to end: String, count: Int) -> RedisCommand {
        RedisCommand("XRANGE", key, start, end, "COUNT", String(count))
    }

    /// `XREVRANGE key + - COUNT count`: the stream's last `count` entries, newest first.
    public static func xrevrange(_ key: String, count: Int) -> RedisCommand {
        RedisCommand("XREVRANGE", key, "+", "-", "COUNT", String(count))
    }

    /// `EVALSHA digest numkeys key… argument…`.
    package static func evalSHA(_ digest: [UInt8], keys: [[UInt8]], arguments: [[UInt8]]) -> RedisCommand {
        RedisCommand("EVALSHA", arguments: [digest, Array(String(keys.count).utf8)] + keys + arguments)
    }

    /// `EVAL script numkeys key… argument…`.
    package static func eval(_ source: [UInt8], keys: [[UInt8]], arguments: [[UInt8]]) -> RedisCommand {
        RedisCommand("EVAL", arguments: [source, Array(String(keys.count).utf8)] + keys + arguments)
    }

    package static let ping = RedisCommand("PING")

    /// `ROLE`: whether a node is a primary (`master`) or a replica.
    package static let role = RedisCommand("ROLE")

    /// `AUTH user password` for an ACL user, `AUTH password` for the default one.
    public static func auth(user: String?, password: String) -> RedisCommand {
        user.map { RedisCommand("AUTH", $0, password) } ?? RedisCommand("AUTH", password)
    }

    package static func select(_ database: Int) -> RedisCommand {
        RedisCommand("SELECT", String(database))
    }

    /// `SENTINEL get-master-addr-by-name NAME`: a Sentinel's answer, the group's primary as `[host, port]`.
    package static func sentinelPrimaryAddress(of masterName: String) -> RedisCommand {
        RedisCommand("SENTINEL", "get-master-addr-by-name", masterName)
    }

    public static func subscribe(_ channels: [String]) -> RedisCommand {
        RedisCommand("SUBSCRIBE", arguments: channels.map { Array($0.utf8) })
    }

    /// `SSUBSCRIBE`: Redis 7's sharded channels (a channel lives on the node owning its slot).
    package static func ssubscribe(_ channels: [String]) -> RedisCommand {
        RedisCommand("SSUBSCRIBE", arguments: channels.map { Array($0.utf8) })
    }

    /// `CLUSTER SHARDS` (Redis 7): the slot map, shard by shard.
    public static let clusterShards = RedisCommand("CLUSTER", "SHARDS")

    /// `CLUSTER SLOTS`: the slot map as Redis before 7 gives it.
    package static let clusterSlots = RedisCommand("CLUSTER", "SLOTS")

    /// `ASKING`: the next command on the connection may touch a slot that is migrating to this node (after `-ASK`).
    package static let asking = RedisCommand("ASKING")
}
