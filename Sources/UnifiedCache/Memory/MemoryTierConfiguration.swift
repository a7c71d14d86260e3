/// The memory tier's budgets; both hold at all times.
public struct MemoryTierConfiguration: Sendable, Equatable {
    /// Byte budget: the sum of every entry's `MemoryTier.cost(of:)`.
    public var maxBytes: Int
    /// Entry budget.
    public var maxEntries: Int
    /// What the tier keeps when it is full (`--eviction`).
    public var eviction: EvictionKind

    public init(maxBytes: Int = 64 << 20, maxEntries: Int = 100_000, eviction: EvictionKind = .tinyLFU) {
        self.maxBytes = max(0, maxBytes)
        self.maxEntries = max(0, maxEntries)
        self.eviction = eviction
    }
}

/// Sizes and counters of the memory tier.
public struct MemoryTierStatistics: Sendable, Equatable {
    public var entries = 0, bytes = 0
    public var limitBytes = 0, limitEntries = 0
    /// Cost of every entry that left the tier so far (evicted, replaced or removed): what the allocator got back.
    public var releasedBytes = 0
    /// The policy's admissions, evictions and window.
    public var decisions = EvictionStatistics()

    /// Entries removed to keep the budgets.
    public var evictions: Int { decisions.evictions }
}
