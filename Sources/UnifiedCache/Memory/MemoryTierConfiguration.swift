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
    public var entries: Int
    public var bytes: Int
    public var limitBytes: Int
    public var limitEntries: Int
    /// Cost of every entry that left the tier so far (evicted, replaced or removed): what the allocator got back.
    public var releasedBytes: Int
    /// The policy's admissions, evictions and window.
    public var decisions: EvictionStatistics

    public init(
        entries: Int = 0, bytes: Int = 0, limitBytes: Int = 0, limitEntries: Int = 0, releasedBytes: Int = 0,
        decisions: EvictionStatistics = EvictionStatistics()
    ) {
        self.entries = entries
        self.bytes = bytes
        self.limitBytes = limitBytes
        self.limitEntries = limitEntries
        self.releasedBytes = releasedBytes
        self.decisions = decisions
    }

    /// Entries removed to keep the budgets.
    public var evictions: Int { decisions.evictions }
}
