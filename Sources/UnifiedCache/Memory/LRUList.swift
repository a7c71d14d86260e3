/// A plain, non-thread-safe least-recently-used map (groupcache's `lru.Cache`).
///
/// Nodes live in one array and link to each other by index (an intrusive doubly linked list),
/// so `value(for:)`, `set`, `removeValue` and `removeOldest` are O(1) without per-node allocations.
/// Budgets are the owner's business: this type only keeps order.
struct LRUList<Key: Hashable, Value> {
    fileprivate struct Node {
        var key: Key?
        var value: Value?
        var previous: Int
        var next: Int
    }

    private static var none: Int { -1 }

    /// Bytes one node takes in the node array.
    static var nodeStride: Int { MemoryLayout<Node>.stride }

    private var nodes: [Node] = []
    private var index: [Key: Int] = [:]
    private var freeSlots: [Int] = []
    /// Most recently used.
    private var head = LRUList.none
    /// Least recently used.
    private var tail = LRUList.none

    init() {}

    var count: Int { index.count }
    var isEmpty: Bool { index.isEmpty }

    /// The value for `key`, marking it most recently used.
    mutating func value(for key: Key) -> Value? {
        guard let slot = index[key] else { return nil }
        moveToFront(slot)
        return nodes[slot].value
    }

    /// The value for `key` without touching its recency.
    func peek(_ key: Key) -> Value? {
        guard let slot = index[key] else { return nil }
        return nodes[slot].value
    }

    func contains(_ key: Key) -> Bool { index[key] != nil }

    /// Inserts or replaces `value` as most recently used; returns the replaced value.
    @discardableResult
    mutating func set(_ value: Value, for key: Key) -> Value? {
        if let slot = index[key] {
            let old = nodes[slot].value
            nodes[slot].value = value
            moveToFront(slot)
            return old
        }
        let node = Node(key: key, value: value, previous: LRUList.none, next: head)
        let slot: Int
        if let free = freeSlots.popLast() {
            slot = free
            nodes[slot] = node
        } else {
            slot = nodes.count
            nodes.append(node)
        }
        if head != LRUList.none { nodes[head].previous = slot }
        head = slot
        if tail == LRUList.none { tail = slot }
        index[key] = slot
        return nil
    }

    @discardableResult
    mutating func removeValue(for key: Key) -> Value? {
        guard let slot = index.removeValue(forKey: key) else { return nil }
        return release(slot)
    }

    /// Removes and returns the least recently used pair.
    mutating func removeOldest() -> (key: Key, value: Value)? {
        guard tail != LRUList.none, let key = nodes[tail].key else { return nil }
        index.removeValue(forKey: key)
        let slot = tail
        guard let value = release(slot) else { return nil }
        return (key, value)
    }

    mutating func removeAll() {
        nodes.removeAll()
        index.removeAll()
        freeSlots.removeAll()
        head = LRUList.none
        tail = LRUList.none
    }

    /// Pairs from most to least recently used.
    var elements: [(key: Key, value: Value)] {
        var result: [(key: Key, value: Value)] = []
        result.reserveCapacity(count)
        var slot = head
        while slot != LRUList.none {
            if let key = nodes[slot].key, let value = nodes[slot].value { result.append((key, value)) }
            slot = nodes[slot].next
        }
        return result
    }

    private mutating func unlink(_ slot: Int) {
        let previous = nodes[slot].previous
        let next = nodes[slot].next
        if previous != LRUList.none { nodes[previous].next = next } else { head = next }
        if next != LRUList.none { nodes[next].previous = previous } else { tail = previous }
        nodes[slot].previous = LRUList.none
        nodes[slot].next = LRUList.none
    }

    private mutating func moveToFront(_ slot: Int) {
        guard slot != head else { return }
        unlink(slot)
        nodes[slot].next = head
        if head != LRUList.none { nodes[head].previous = slot }
        head = slot
        if tail == LRUList.none { tail = slot }
    }

    private mutating func release(_ slot: Int) -> Value? {
        unlink(slot)
        let value = nodes[slot].value
        nodes[slot].key = nil
        nodes[slot].value = nil
        freeSlots.append(slot)
        return value
    }
}

extension LRUList: Sendable where Key: Sendable, Value: Sendable {}
extension LRUList.Node: Sendable where Key: Sendable, Value: Sendable {}
