import NIOConcurrencyHelpers

/// The thread-safe memory tier: an `LRUList` behind a lock (`NIOLockedValueBox`), with byte accounting and
/// eviction so that both budgets of `MemoryTierConfiguration` hold after every call.
public final class MemoryTier: Sendable {
    struct State: Sendable {
        var lru = LRUList<String, CacheEntry>()
        var bytes = 0
        var evictions = 0
        var releasedBytes = 0
    }

    public let configuration: MemoryTierConfiguration
    private let state = NIOLockedValueBox(State())

    public init(configuration: MemoryTierConfiguration) {
        self.configuration = configuration
    }

    /// What an entry costs against the byte budget: its whole footprint in memory (`EntryCost`).
    public static func cost(of entry: CacheEntry) -> Int { EntryCost.of(entry) }

    /// The entry for `key`, marked most recently used.
    public func entry(for key: String) -> CacheEntry? {
        state.withLockedValue { $0.lru.value(for: key) }
    }

    /// The entry for `key` without touching its recency.
    public func peek(_ key: String) -> CacheEntry? {
        state.withLockedValue { $0.lru.peek(key) }
    }

    public func contains(_ key: String) -> Bool {
        state.withLockedValue { $0.lru.contains(key) }
    }

    /// Stores `entry` as most recently used, evicting least recently used entries to stay in budget.
    /// An entry larger than the whole byte budget is not stored (and any older value of its key is dropped).
    /// Returns whether it was stored.
    @discardableResult
    public func insert(_ entry: CacheEntry) -> Bool {
        state.withLockedValue { Self.insert(entry, into: &$0, configuration: configuration) }
    }

    @discardableResult
    public func remove(_ key: String) -> CacheEntry? {
        state.withLockedValue { Self.remove(key, from: &$0) }
    }

    /// Removes every entry whose metadata matches; returns the removed keys.
    public func removeAll(where predicate: (CacheEntryMetadata) -> Bool) -> [String] {
        state.withLockedValue { state in
            let keys = state.lru.elements.filter { predicate($0.value.metadata) }.map(\.key)
            for key in keys { Self.remove(key, from: &state) }
            return keys
        }
    }

    /// Metadata of entries whose key starts with `prefix`, most recently used first.
    public func list(prefix: String) -> [CacheEntryMetadata] {
        state.withLockedValue { state in
            state.lru.elements.lazy.filter { $0.key.hasPrefix(prefix) }.map(\.value.metadata)
        }
    }

    public func statistics() -> MemoryTierStatistics {
        state.withLockedValue {
            MemoryTierStatistics(
                entries: $0.lru.count, bytes: $0.bytes, limitBytes: configuration.maxBytes,
                limitEntries: configuration.maxEntries, evictions: $0.evictions,
                releasedBytes: $0.releasedBytes)
        }
    }

    static func insert(_ entry: CacheEntry, into state: inout State, configuration: MemoryTierConfiguration) -> Bool {
        let cost = cost(of: entry)
        guard cost <= configuration.maxBytes, configuration.maxEntries > 0 else {
            remove(entry.key, from: &state)
            return false
        }
        if let old = state.lru.set(entry, for: entry.key) {
            state.bytes -= Self.cost(of: old)
            state.releasedBytes += Self.cost(of: old)
        }
        state.bytes += cost
        while state.bytes > configuration.maxBytes || state.lru.count > configuration.maxEntries {
            guard let evicted = state.lru.removeOldest() else { break }
            state.bytes -= Self.cost(of: evicted.value)
            state.releasedBytes += Self.cost(of: evicted.value)
            state.evictions += 1
        }
        return true
    }

    @discardableResult
    static func remove(_ key: String, from state: inout State) -> CacheEntry? {
        guard let old = state.lru.removeValue(for: key) else { return nil }
        state.bytes -= cost(of: old)
        state.releasedBytes += cost(of: old)
        return old
    }
}
