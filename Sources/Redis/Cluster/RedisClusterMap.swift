/// Which primary serves each of a cluster's 16384 slots, as a node told it (`CLUSTER SHARDS` or `CLUSTER SLOTS`:
/// `RedisClusterMap+Replies`), with each shard's replicas.
public struct RedisClusterMap: Sendable, Hashable {
    /// A primary, the slots it serves and its replicas.
    public struct Shard: Sendable, Hashable {
        public var primary: RedisEndpoint.Address
        public var replicas: [RedisEndpoint.Address]
        public var slots: [ClosedRange<Int>]
        /// Whether the node that told the map had the primary up (`CLUSTER SHARDS`' `health`; `CLUSTER SLOTS` does
        /// not say: up). A failed primary with no replica to promote keeps its slots, and is still sent their keys.
        public var online: Bool

        public init(
            primary: RedisEndpoint.Address, replicas: [RedisEndpoint.Address] = [], slots: [ClosedRange<Int>], online: Bool = true
        ) {
            self.primary = primary
            self.replicas = replicas
            self.slots = slots
            self.online = online
        }
    }

    public private(set) var shards: [Shard]
    /// For each slot, the index in `shards` of its owner; -1 when no shard serves it.
    private var owners: [Int16]

    /// The map of `shards`; slots outside 0…16383 are ignored, and a slot named twice is the later shard's.
    public init(shards: [Shard]) {
        self.shards = shards
        owners = Array(repeating: -1, count: RedisHashSlot.count)
        for (index, shard) in shards.enumerated() {
            for range in shard.slots {
                for slot in range.clamped(to: 0...(RedisHashSlot.count - 1)) { owners[slot] = Int16(index) }
            }
        }
    }

    /// The primary serving `slot`; nil when none does (the slot is not covered).
    public func primary(serving slot: Int) -> RedisEndpoint.Address? {
        guard (0..<RedisHashSlot.count).contains(slot) else { return nil }
        let owner = owners[slot]
        return owner < 0 ? nil : shards[Int(owner)].primary
    }

    /// The primaries, one per shard.
    public var primaries: [RedisEndpoint.Address] { shards.map(\.primary) }

    /// Every node the map names: primaries and replicas.
    package var nodeCount: Int { shards.reduce(0) { $0 + 1 + $1.replicas.count } }

    /// How many slots have a primary, up or not.
    public var slotsCovered: Int { owners.reduce(0) { $0 + ($1 < 0 ? 0 : 1) } }

    /// How many slots have a primary that is up (16384 when the cluster is whole): `/stats`' `slotsCovered`.
    public var slotsServed: Int { owners.reduce(0) { $0 + ($1 >= 0 && shards[Int($1)].online ? 1 : 0) } }

    /// The map after a `MOVED`: `slot` is served by `primary` (a shard of its own when the map does not know it yet).
    func moving(_ slot: Int, to primary: RedisEndpoint.Address) -> RedisClusterMap {
        guard (0..<RedisHashSlot.count).contains(slot) else { return self }
        var map = self
        if let index = shards.firstIndex(where: { $0.primary == primary }) {
            map.owners[slot] = Int16(index)
        } else {
            map.shards.append(Shard(primary: primary, slots: []))
            map.owners[slot] = Int16(map.shards.count - 1)
        }
        return map
    }
}
