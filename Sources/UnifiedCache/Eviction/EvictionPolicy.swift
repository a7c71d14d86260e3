/// Which entries a tier keeps when it is full (`--eviction`).
public enum EvictionKind: String, Sendable, CaseIterable {
    /// W-TinyLFU with an adaptive window (`TinyLFUPolicy`).
    case tinyLFU = "tinylfu"
    /// Least recently used (`LRUPolicy`).
    case lru
}

/// A tier's budgets as a policy sees them: the sum of its entries' weights, and their number.
public struct EvictionCapacity: Sendable, Equatable {
    public var weight: Int
    public var count: Int

    /// `count` defaults to no bound (a tier with a byte budget only).
    public init(weight: Int, count: Int = .max) {
        self.weight = max(0, weight)
        self.count = max(0, count)
    }
}

/// What a policy decided so far.
public struct EvictionStatistics: Sendable, Equatable {
    /// Entries let into the main region (`tinylfu`: past the frequency sketch; `lru`: every new entry).
    public var admitted = 0
    /// Entries the frequency sketch turned away (each also counts as an eviction); always 0 under `lru`.
    public var rejected = 0
    /// Entries removed to keep the budgets.
    public var evictions = 0
    /// The window's share of the capacity, 0 to 1 (`tinylfu` only).
    public var window: Double?

    public init(admitted: Int = 0, rejected: Int = 0, evictions: Int = 0, window: Double? = nil) {
        self.admitted = admitted
        self.rejected = rejected
        self.evictions = evictions
        self.window = window
    }
}

/// What a tier keeps when it is full: the order and admission of its entries, by slot. The tier keeps its values in
/// an array indexed by the slot `insert` returns, and asks `evict` which slots to let go; a policy never sees a value.
/// Not thread-safe: the tier owns it (a lock, an actor).
///
/// Every call keeps the policy's own books; `evict` restores both budgets of `capacity` (as far as entries other
/// than `keeping` allow).
public protocol EvictionPolicy<Key>: Sendable {
    associatedtype Key: Hashable

    var capacity: EvictionCapacity { get }
    var count: Int { get }
    /// The sum of the entries' weights.
    var weight: Int { get }
    var statistics: EvictionStatistics { get }

    func weight(of slot: Int) -> Int
    /// `slot` and its generation in one word (never 0), for `recordAccesses` off the tier's lock.
    func handle(of slot: Int) -> UInt64

    /// A new entry whose key's `KeyHash` is `hash`, as the most recently used (it enters the window); returns its
    /// slot. For a tier that hashed the key already.
    mutating func insert(hash: UInt32, weight: Int) -> Int
    /// An entry the tier found (at start-up) whose key's `KeyHash` is `hash`, as the least recently used of the main
    /// region, with no frequency.
    mutating func insertEldest(hash: UInt32, weight: Int) -> Int
    /// A new weight for `slot`, counted as an access when `access`.
    mutating func update(_ slot: Int, weight: Int, access: Bool)
    mutating func recordAccess(_ slot: Int)
    /// Accesses recorded off the lock (`ReadBuffer`), oldest first; handles whose entry left are ignored.
    mutating func recordAccesses(_ handles: [UInt64])
    mutating func remove(_ slot: Int)
    /// Lets entries go until both budgets hold, never `keeping`; appends each victim's slot to `victims`. A victim's
    /// slot is free once this returns, and its `weight(of:)` readable until the next `insert`.
    mutating func evict(keeping: Int?, into victims: inout [Int])
    mutating func reserveCapacity(_ count: Int)
}

extension EvictionPolicy {
    /// A new entry, as the most recently used (it enters the window); returns its slot.
    public mutating func insert(_ key: Key, weight: Int) -> Int {
        insert(hash: KeyHash.of(key), weight: weight)
    }
}

extension EvictionKind {
    /// A new, empty policy of this kind.
    public func makePolicy<Key: Hashable>(capacity: EvictionCapacity, for key: Key.Type = Key.self) -> any EvictionPolicy<Key> {
        switch self {
        case .tinyLFU: TinyLFUPolicy<Key>(capacity: capacity)
        case .lru: LRUPolicy<Key>(capacity: capacity)
        }
    }
}
