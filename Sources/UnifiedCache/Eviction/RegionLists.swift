/// Where a policy keeps its entries: nodes in one array, linked by index into up to three least-recently-used lists
/// (the regions), free nodes chained through the same links (no per-node allocation, no free-slot array).
///
/// A node holds no key: a tier keeps its values in an array indexed by the same slot, and the policy keeps only what
/// it weighs (the key's hash and the entry's weight), 24 bytes a node. A slot's generation changes each time it is
/// freed, so that a handle (slot and generation) recorded off the lock is recognised as outdated once its entry left.
struct RegionLists: Sendable {
    enum Region: UInt32, Sendable {
        /// The admission window (LRU: the only region).
        case window
        /// The main region's part on trial: where the window's candidates enter, and the first victims.
        case probation
        /// The main region's part asked for again while on probation.
        case protected
        /// A free node.
        case free
    }

    struct Node: Sendable {
        var weight: Int
        /// Towards the list's eldest end, or -1.
        var older: Int32
        /// Towards the list's newest end (or the next free node), or -1.
        var newer: Int32
        var hash: UInt32
        /// The region (two low bits) and the slot's generation (the rest, never 0).
        var tag: UInt32

        var region: Region { Region(rawValue: tag & 3) ?? .free }
        var generation: UInt32 { tag >> 2 }
    }

    /// One region's list and its totals.
    struct List: Sendable {
        var eldest: Int32 = -1
        var newest: Int32 = -1
        var weight = 0
        var count = 0
    }

    /// Bytes one node takes in the node array.
    static var nodeStride: Int { MemoryLayout<Node>.stride }

    private(set) var nodes: [Node] = []
    private var firstFree: Int32 = -1
    private(set) var window = List()
    private(set) var probation = List()
    private(set) var protected = List()
    /// Every live node's weight.
    private(set) var weight = 0
    private(set) var count = 0

    mutating func reserveCapacity(_ count: Int) { nodes.reserveCapacity(count) }

    func list(_ region: Region) -> List {
        switch region {
        case .window: window
        case .probation: probation
        case .protected: protected
        case .free: List()
        }
    }

    func region(of slot: Int) -> Region { nodes[slot].region }
    func weight(of slot: Int) -> Int { nodes[slot].weight }
    func hash(of slot: Int) -> UInt32 { nodes[slot].hash }
    func newer(than slot: Int) -> Int? { nodes[slot].newer < 0 ? nil : Int(nodes[slot].newer) }

    /// The slot and its generation in one word, never 0.
    func handle(of slot: Int) -> UInt64 { UInt64(nodes[slot].generation) << 32 | UInt64(slot) }

    /// The slot `handle` names if its entry is still the one it was recorded for.
    func slot(for handle: UInt64) -> Int? {
        let slot = Int(truncatingIfNeeded: handle & 0xFFFF_FFFF)
        guard slot < nodes.count, UInt64(nodes[slot].generation) == handle >> 32, nodes[slot].region != .free
        else { return nil }
        return slot
    }

    /// A new node in `region`, at its newest end (or its eldest); returns its slot.
    mutating func add(weight: Int, hash: UInt32, to region: Region, eldest: Bool = false) -> Int {
        let slot: Int
        if firstFree >= 0 {
            slot = Int(firstFree)
            firstFree = nodes[slot].newer
            nodes[slot].weight = weight
            nodes[slot].hash = hash
        } else {
            precondition(nodes.count < Int32.max, "a policy holds fewer than 2^31 entries")
            slot = nodes.count
            nodes.append(Node(weight: weight, older: -1, newer: -1, hash: hash, tag: 1 << 2 | Region.free.rawValue))
        }
        self.weight += weight
        count += 1
        link(slot, into: region, eldest: eldest)
        return slot
    }

    /// Unlinks `slot` and frees it; its weight stays readable until the slot is used again.
    mutating func release(_ slot: Int) {
        unlink(slot)
        weight -= nodes[slot].weight
        count -= 1
        var generation = nodes[slot].generation &+ 1
        if generation >= 1 << 30 { generation = 1 }
        nodes[slot].tag = generation << 2 | Region.free.rawValue
        nodes[slot].newer = firstFree
        firstFree = Int32(slot)
    }

    /// Moves `slot` to the newest end of `region` (its own region: marks it just used; nothing to do if it is the
    /// newest already, as a key asked for again and again is).
    mutating func move(_ slot: Int, to region: Region) {
        if nodes[slot].region == region, list(region).newest == Int32(slot) { return }
        unlink(slot)
        link(slot, into: region, eldest: false)
    }

    mutating func setWeight(_ slot: Int, to weight: Int) {
        let change = weight - nodes[slot].weight
        nodes[slot].weight = weight
        self.weight += change
        update(nodes[slot].region) { $0.weight += change }
    }

    mutating func removeAll() {
        nodes.removeAll()
        firstFree = -1
        window = List()
        probation = List()
        protected = List()
        weight = 0
        count = 0
    }

    private mutating func update(_ region: Region, _ change: (inout List) -> Void) {
        switch region {
        case .window: change(&window)
        case .probation: change(&probation)
        case .protected: change(&protected)
        case .free: break
        }
    }

    private mutating func link(_ slot: Int, into region: Region, eldest: Bool) {
        let weight = nodes[slot].weight
        let generation = nodes[slot].generation
        nodes[slot].tag = generation << 2 | region.rawValue
        var list = self.list(region)
        let index = Int32(slot)
        if eldest {
            nodes[slot].older = -1
            nodes[slot].newer = list.eldest
            if list.eldest >= 0 { nodes[Int(list.eldest)].older = index } else { list.newest = index }
            list.eldest = index
        } else {
            nodes[slot].newer = -1
            nodes[slot].older = list.newest
            if list.newest >= 0 { nodes[Int(list.newest)].newer = index } else { list.eldest = index }
            list.newest = index
        }
        list.weight += weight
        list.count += 1
        update(region) { $0 = list }
    }

    private mutating func unlink(_ slot: Int) {
        let region = nodes[slot].region
        guard region != .free else { return }
        let (older, newer) = (nodes[slot].older, nodes[slot].newer)
        let weight = nodes[slot].weight
        if older >= 0 { nodes[Int(older)].newer = newer }
        if newer >= 0 { nodes[Int(newer)].older = older }
        update(region) { list in
            if older < 0 { list.eldest = newer }
            if newer < 0 { list.newest = older }
            list.weight -= weight
            list.count -= 1
        }
        nodes[slot].older = -1
        nodes[slot].newer = -1
    }
}
