/// Least recently used: one list, the eldest entry goes first (the tiers' behaviour before `tinylfu`, kept for
/// comparison with `--eviction lru`).
public struct LRUPolicy<Key: Hashable>: EvictionPolicy {
    public let capacity: EvictionCapacity
    private var lists = RegionLists()
    private var counters = EvictionStatistics()

    public init(capacity: EvictionCapacity) {
        self.capacity = capacity
    }

    public var count: Int { lists.count }
    public var weight: Int { lists.weight }
    public var statistics: EvictionStatistics { counters }

    public func weight(of slot: Int) -> Int { lists.weight(of: slot) }
    public func handle(of slot: Int) -> UInt64 { lists.handle(of: slot) }

    public mutating func insert(hash: UInt32, weight: Int) -> Int {
        counters.admitted += 1
        return lists.add(weight: weight, hash: 0, to: .window)
    }

    public mutating func insertEldest(hash: UInt32, weight: Int) -> Int {
        lists.add(weight: weight, hash: 0, to: .window, eldest: true)
    }

    public mutating func update(_ slot: Int, weight: Int, access: Bool) {
        lists.setWeight(slot, to: weight)
        if access { recordAccess(slot) }
    }

    public mutating func recordAccess(_ slot: Int) { lists.move(slot, to: .window) }

    public mutating func recordAccesses(_ handles: [UInt64]) {
        for handle in handles {
            if let slot = lists.slot(for: handle) { lists.move(slot, to: .window) }
        }
    }

    public mutating func remove(_ slot: Int) { lists.release(slot) }

    public mutating func evict(keeping: Int?, into victims: inout [Int]) {
        while lists.weight > capacity.weight || lists.count > capacity.count {
            var eldest = lists.window.eldest < 0 ? nil : Int(lists.window.eldest)
            if let slot = eldest, slot == keeping { eldest = lists.newer(than: slot) }
            guard let victim = eldest else { break }
            lists.release(victim)
            victims.append(victim)
            counters.evictions += 1
        }
    }

    public mutating func reserveCapacity(_ count: Int) { lists.reserveCapacity(count) }
}
