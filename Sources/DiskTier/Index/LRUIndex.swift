import UnifiedCache

/// What the tier knows about one stored file without reading it.
struct IndexedEntry: Sendable, Equatable {
    var metadata: CacheEntryMetadata
    /// Header plus body: the bytes the file takes, which the budget counts.
    var fileSize: Int
}

/// Keys in least-recently-used order with byte accounting (groupcache's `lru` shape: a map to nodes
/// of a doubly linked list, kept in an array). Not thread-safe: the tier's actor owns it. A node holds its key
/// only in its metadata (one string, shared with the map's key): the index's bytes per entry are documented
/// (docs/operations.md) and bounded by CONTRACT §1.
struct LRUIndex {
    private struct Node {
        var value: IndexedEntry
        var newer: Int
        var older: Int
    }

    private var nodes: [Node] = []
    private var freeSlots: [Int] = []
    private var slots: [String: Int] = [:]
    /// Most recently used node, or -1.
    private var newest = -1
    /// Least recently used node, or -1.
    private var oldest = -1
    private(set) var totalBytes = 0

    var count: Int { slots.count }
    var leastRecentKey: String? { oldest < 0 ? nil : nodes[oldest].value.metadata.key }

    /// Makes room for `count` entries in all, so that a start-up scan fills the index without growing it.
    mutating func reserveCapacity(_ count: Int) {
        nodes.reserveCapacity(count)
        slots.reserveCapacity(count)
    }

    /// The entry, without changing its recency.
    subscript(key: String) -> IndexedEntry? {
        slots[key].map { nodes[$0].value }
    }

    /// Marks `key` as just used.
    mutating func touch(_ key: String) {
        guard let slot = slots[key] else { return }
        unlink(slot)
        linkNewest(slot)
    }

    /// Changes the size of `key`'s file (re-sealed in place) without changing its recency.
    mutating func resize(_ key: String, fileSize: Int) {
        guard let slot = slots[key] else { return }
        totalBytes += fileSize - nodes[slot].value.fileSize
        nodes[slot].value.fileSize = fileSize
    }

    /// Adds or replaces `key`, as the most recently used one or (for entries found at start-up) the least.
    mutating func insert(_ key: String, _ value: IndexedEntry, leastRecent: Bool = false) {
        if let slot = slots[key] {
            totalBytes += value.fileSize - nodes[slot].value.fileSize
            nodes[slot].value = value
            unlink(slot)
            leastRecent ? linkOldest(slot) : linkNewest(slot)
            return
        }
        let node = Node(value: value, newer: -1, older: -1)
        let slot: Int
        if let reused = freeSlots.popLast() {
            nodes[reused] = node
            slot = reused
        } else {
            nodes.append(node)
            slot = nodes.count - 1
        }
        slots[key] = slot
        totalBytes += value.fileSize
        leastRecent ? linkOldest(slot) : linkNewest(slot)
    }

    @discardableResult
    mutating func remove(_ key: String) -> IndexedEntry? {
        guard let slot = slots.removeValue(forKey: key) else { return nil }
        unlink(slot)
        let value = nodes[slot].value
        totalBytes -= value.fileSize
        nodes[slot].value.metadata.key = ""  // the free slot keeps no strings alive
        nodes[slot].value.metadata.user = nil
        freeSlots.append(slot)
        return value
    }

    /// Every entry matching `predicate`, in no particular order.
    func filter(_ predicate: (IndexedEntry) -> Bool) -> [IndexedEntry] {
        slots.values.lazy.map { nodes[$0].value }.filter(predicate)
    }

    private mutating func unlink(_ slot: Int) {
        let (newer, older) = (nodes[slot].newer, nodes[slot].older)
        if newer >= 0 { nodes[newer].older = older } else { newest = older }
        if older >= 0 { nodes[older].newer = newer } else { oldest = newer }
        nodes[slot].newer = -1
        nodes[slot].older = -1
    }

    private mutating func linkNewest(_ slot: Int) {
        nodes[slot].older = newest
        if newest >= 0 { nodes[newest].newer = slot }
        newest = slot
        if oldest < 0 { oldest = slot }
    }

    private mutating func linkOldest(_ slot: Int) {
        nodes[slot].newer = oldest
        if oldest >= 0 { nodes[oldest].older = slot }
        oldest = slot
        if newest < 0 { newest = slot }
    }
}
