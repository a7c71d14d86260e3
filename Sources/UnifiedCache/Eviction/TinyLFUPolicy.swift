/// W-TinyLFU (Caffeine's eviction policy): a small LRU window in front of a segmented main region (probation,
/// protected), and a frequency sketch at the main region's door. A new entry always enters the window; an entry
/// pushed out of it enters the main region only if the sketch says it was asked for more often than every entry it
/// would push out there (`TinyLFUPolicy+Eviction`). The window's share adapts to the workload (`WindowClimber`,
/// `TinyLFUPolicy+Window`), so that a workload where recency is what matters keeps LRU's hit rate.
public struct TinyLFUPolicy<Key: Hashable>: EvictionPolicy {
    /// A region's bounds: both hold, or it is over.
    struct Limit: Sendable {
        var weight: Int
        var count: Int
    }

    /// The window's share at the start (Caffeine's 1 %).
    public static var initialWindow: Double { WindowClimber.shares[0] }
    /// The fewest entries whose window adapts.
    static var climbingEntries: Int { 100 }
    /// The protected part's share of the main region.
    static var protectedShare: Double { 0.8 }

    public let capacity: EvictionCapacity
    var lists = RegionLists()
    /// The frequencies; a miniature's is never used (it reads its parent's).
    var sketch = FrequencySketch()
    /// `nil`: the window keeps its share.
    var climber: WindowClimber?
    /// Whether the policy counts accesses in its own sketch (a miniature does not).
    let countsFrequencies: Bool
    var random: PolicyRandom
    var counters = EvictionStatistics()
    private(set) var windowShare: Double
    private(set) var windowLimit = Limit(weight: 0, count: 0)
    private(set) var protectedLimit = Limit(weight: 0, count: 0)
    /// Main-region entries still to move into the window after its share grew.
    var growing = false
    /// The victims a candidate is weighed against (kept to spare an allocation per contest).
    var gathered: [Int] = []

    /// - Parameters:
    ///   - window: the window's share of the capacity, 0 to 1, when `adaptive` is `false` (else it starts at 1 %).
    ///   - adaptive: whether the window's share adapts to the workload (from `climbingEntries` entries).
    ///   - seed: the random admissions' seed (against hash flooding); `nil` seeds from the system.
    public init(capacity: EvictionCapacity, window: Double = initialWindow, adaptive: Bool = true, seed: UInt64? = nil) {
        self.capacity = capacity
        countsFrequencies = true
        // Below 100 entries the ladder's lowest rung (1 %) holds no entry, and five miniatures of the whole cache
        // replaying every request cost a small cache more than its own policy did: the window keeps its share.
        climber = adaptive && capacity.count >= Self.climbingEntries ? WindowClimber(capacity: capacity) : nil
        random = seed.map(PolicyRandom.init(seed:)) ?? PolicyRandom()
        windowShare = climber?.share ?? min(max(window, 0), 1)
        updateLimits()
    }

    /// A miniature for the climber: a fixed window, no sketch of its own.
    init(miniatureOf capacity: EvictionCapacity, window: Double) {
        self.capacity = capacity
        countsFrequencies = false
        random = PolicyRandom(seed: 0)
        windowShare = window
        updateLimits()
    }

    public var count: Int { lists.count }
    public var weight: Int { lists.weight }

    public var statistics: EvictionStatistics {
        var statistics = counters
        statistics.window = windowShare
        return statistics
    }

    public func weight(of slot: Int) -> Int { lists.weight(of: slot) }
    public func handle(of slot: Int) -> UInt64 { lists.handle(of: slot) }

    public mutating func insert(hash: UInt32, weight: Int) -> Int {
        if countsFrequencies {
            sketch.ensureCapacity(lists.count + 1)
            sketch.increment(hash)
            climber?.record(hash, weight: weight, frequencies: sketch)
        }
        return lists.add(weight: weight, hash: hash, to: .window)
    }

    public mutating func insertEldest(hash: UInt32, weight: Int) -> Int {
        lists.add(weight: weight, hash: hash, to: .probation, eldest: true)
    }

    public mutating func update(_ slot: Int, weight: Int, access: Bool) {
        lists.setWeight(slot, to: weight)
        if access { recordAccess(slot) }
    }

    /// Counts the access and moves the entry: to its region's newest end, or from probation to protected.
    public mutating func recordAccess(_ slot: Int) {
        switch lists.region(of: slot) {
        case .window:
            lists.move(slot, to: .window)
        case .probation:
            if lists.weight(of: slot) <= protectedLimit.weight {
                lists.move(slot, to: .protected)
                demoteFromProtected()
            } else {
                lists.move(slot, to: .probation)
            }
        case .protected:
            lists.move(slot, to: .protected)
        case .free:
            return
        }
        guard countsFrequencies else { return }
        let hash = lists.hash(of: slot)
        sketch.increment(hash)
        climber?.record(hash, weight: lists.weight(of: slot), frequencies: sketch)
    }

    public mutating func recordAccesses(_ handles: [UInt64]) {
        for handle in handles {
            if let slot = lists.slot(for: handle) { recordAccess(slot) }
        }
        climb()
    }

    public mutating func remove(_ slot: Int) { lists.release(slot) }

    public mutating func reserveCapacity(_ count: Int) { lists.reserveCapacity(count) }

    /// Moves protected entries, eldest first, to probation while the protected part is over its bound.
    mutating func demoteFromProtected() {
        while Self.exceeds(lists.protected, protectedLimit) {
            lists.move(Int(lists.protected.eldest), to: .probation)
        }
    }

    static func exceeds(_ list: RegionLists.List, _ limit: Limit) -> Bool {
        list.weight > limit.weight || list.count > limit.count
    }

    /// The regions' bounds from the window's share: that share of each budget for the window (at least one entry, as
    /// in Caffeine, so that a newcomer is weighed as the entry before it leaves the window), 80 % of the rest for the
    /// protected part.
    mutating func setWindowShare(_ share: Double) {
        func part(_ value: Int, _ fraction: Double) -> Int {
            fraction >= 1 ? value : Int(Double(value) * fraction)
        }
        windowShare = min(max(share, 0), 1)
        windowLimit = Limit(
            weight: part(capacity.weight, windowShare), count: max(min(1, capacity.count), part(capacity.count, windowShare)))
        protectedLimit = Limit(
            weight: part(capacity.weight - windowLimit.weight, Self.protectedShare),
            count: part(capacity.count - windowLimit.count, Self.protectedShare))
    }

    private mutating func updateLimits() { setWindowShare(windowShare) }
}
