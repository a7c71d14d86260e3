/// One of the fixed shards a fleet on Redis Cluster divides its keys into (CONTRACT §13): each shard has its own
/// invalidation log, so a shard whose log cannot vouch for this instance's position resets only the local entries
/// of its keys. A key's shard is a stable hash of the cache key (FNV-1a, 64 bits) modulo the shard count, the same
/// on every instance and every release.
public struct SharedShard: Sendable, Hashable, CustomStringConvertible {
    public var index: Int
    public var count: Int

    public init(index: Int, of count: Int) {
        self.index = index
        self.count = count
    }

    /// The shard of `key` among `count` (0 with one shard).
    public static func index(of key: String, count: Int) -> Int {
        guard count > 1 else { return 0 }
        var hash: UInt64 = 0xcbf2_9ce4_8422_2325
        for byte in key.utf8 {
            hash ^= UInt64(byte)
            hash &*= 0x0000_0100_0000_01b3
        }
        return Int(hash % UInt64(count))
    }

    public func contains(_ key: String) -> Bool { Self.index(of: key, count: count) == index }

    public var description: String { "\(index)/\(count)" }
}
