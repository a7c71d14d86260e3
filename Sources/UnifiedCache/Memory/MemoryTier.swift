import NIOConcurrencyHelpers

/// The thread-safe memory tier: entries by key behind one lock (`map`), what to keep when full behind another
/// (`policy`, the `--eviction` policy), so that a hit takes only the first: it looks the entry up and records the
/// access in a lossy read buffer, drained into the policy by the next write (or by the reader whose ring filled, if
/// the policy's lock is free). Both budgets of `MemoryTierConfiguration` hold after every call.
///
/// Lock order: `policy`, then `map` (a reader takes `map` alone, and tries `policy` only once it let `map` go).
package final class MemoryTier: Sendable {
    public let configuration: MemoryTierConfiguration
    private let map = NIOLockedValueBox(MemoryMap())
    private let policy: TryLockedBox<PolicyState>
    private let reads = ReadBuffer()

    public init(configuration: MemoryTierConfiguration) {
        self.configuration = configuration
        let capacity = EvictionCapacity(weight: configuration.maxBytes, count: configuration.maxEntries)
        policy = TryLockedBox(PolicyState(policy: configuration.eviction.makePolicy(capacity: capacity)))
    }

    /// What an entry costs against the byte budget: its whole footprint in memory (`EntryCost`).
    package static func cost(of entry: CacheEntry) -> Int { EntryCost.of(entry) }

    /// The entry for `key`, its access recorded for the policy.
    public func entry(for key: String) -> CacheEntry? {
        located(key)?.entry
    }

    /// The hash a key is found by here: a caller that looks a key up and may then promote a value of it hashes the key
    /// once (`located(_:hash:)`, `promote(_:hash:)`).
    package static func hash(_ key: String) -> UInt32 { MemoryMap.hash(key) }

    /// `entry(for: key)` with the handle it was found under (`hit(sameAs:near:)` starts from it).
    func located(_ key: String) -> (entry: CacheEntry, handle: UInt64)? {
        located(key, hash: Self.hash(key))
    }

    /// `located(key)` for the key whose `hash(_:)` is `hash`.
    func located(_ key: String, hash: UInt32) -> (entry: CacheEntry, handle: UInt64)? {
        assert(hash == Self.hash(key), "a key is looked up by its own hash")
        guard let found = map.withLockedValue({ $0.lookup(key, hash: hash) }) else { return nil }
        recordAccess(found.handle)
        return found
    }

    /// `entry(for: expected.key)` when memory holds the value `expected` was read from (`MemoryMap.handle(sameAs:)`):
    /// its access recorded, and true, without a copy of the entry (six references retained and released); false with
    /// nothing recorded. With the handle `expected` was found under (`located`), its slot is looked at before the key
    /// is looked up.
    public func hit(sameAs expected: CacheEntry, near earlier: UInt64? = nil) -> Bool {
        guard let handle = map.withLockedValue({ $0.handle(sameAs: expected, near: earlier) }) else { return false }
        recordAccess(handle)
        return true
    }

    /// A hit's access, recorded for the policy in the read buffer, after the map's lock is let go.
    private func recordAccess(_ handle: UInt64) {
        if reads.record(handle) {
            // The ring was full: drained, this access goes with it (dropped only while a writer holds the lock).
            policy.withLockedValueIfAvailable { $0.drain(reads, then: handle) }
        }
    }

    /// The entry for `key`, no access recorded.
    public func peek(_ key: String) -> CacheEntry? {
        let hash = Self.hash(key)
        return map.withLockedValue { $0.lookup(key, hash: hash)?.entry }
    }

    public func contains(_ key: String) -> Bool {
        let hash = Self.hash(key)
        return map.withLockedValue { $0.handle(of: key, hash: hash) != nil }
    }

    /// Stores `entry` (a new entry enters as the most recently used; a new value of a stored key counts as an access
    /// of it), letting entries go as the policy decides to stay in budget; `entry` itself always stays. An entry
    /// larger than the whole byte budget is not stored (and any older value of its key is dropped). Returns whether
    /// it was stored.
    @discardableResult
    public func insert(_ entry: CacheEntry) -> Bool {
        insert(entry, hash: Self.hash(entry.key), ifAbsent: false) == .stored
    }

    /// A value read from a tier below, stored as `insert` would unless memory already holds a value of its key (which
    /// it never replaces): `false` then, with nothing changed. `true` otherwise, stored or not (too large for the
    /// budget).
    func promote(_ entry: CacheEntry) -> Bool {
        promote(entry, hash: Self.hash(entry.key))
    }

    /// `promote(entry)` for an entry whose key's `hash(_:)` is `hash`.
    func promote(_ entry: CacheEntry, hash: UInt32) -> Bool {
        insert(entry, hash: hash, ifAbsent: true) != .held
    }

    /// Whether an entry of `cost` (`cost(of:)`) fits the budgets at all (`insert` refuses one that does not).
    package func fits(_ cost: Int) -> Bool { cost <= configuration.maxBytes && configuration.maxEntries > 0 }

    private enum Insertion { case stored, refused, held }

    /// Hashed once (`hash`), for the map's look-up and store and the policy's count.
    private func insert(_ entry: CacheEntry, hash: UInt32, ifAbsent: Bool) -> Insertion {
        assert(hash == Self.hash(entry.key), "an entry is stored under its key's own hash")
        let cost = Self.cost(of: entry)
        return policy.withLockedValue { state in
            let held = map.withLockedValue { $0.handle(of: entry.key, hash: hash) }
            if ifAbsent, held != nil { return .held }
            state.drain(reads)
            guard fits(cost) else {
                remove(entry.key, state: &state)
                return .refused
            }
            let slot: Int
            if let handle = held {
                slot = MemoryMap.slot(of: handle)
                state.releasedBytes += state.policy.weight(of: slot)
                state.policy.update(slot, weight: cost, access: true)
            } else {
                slot = state.policy.insert(hash: hash, weight: cost)
            }
            state.victims.removeAll(keepingCapacity: true)
            state.policy.evict(keeping: slot, into: &state.victims)
            let handle = state.policy.handle(of: slot)
            map.withLockedValue { map in
                map.store(entry, hash: hash, slot: slot, handle: handle)
                for victim in state.victims { map.clear(victim) }
            }
            for victim in state.victims { state.releasedBytes += state.policy.weight(of: victim) }
            return .stored
        }
    }

    @discardableResult
    public func remove(_ key: String) -> CacheEntry? {
        policy.withLockedValue { state in
            state.drain(reads)
            return remove(key, state: &state)
        }
    }

    /// Removes every entry `scope` covers; returns the removed keys.
    func removeAll(in scope: KeyScope) -> [String] {
        policy.withLockedValue { state in
            state.drain(reads)
            let removed = map.withLockedValue { $0.removeAll(in: scope) }
            for (_, slot) in removed {
                state.releasedBytes += state.policy.weight(of: slot)
                state.policy.remove(slot)
            }
            return removed.map(\.key)
        }
    }

    /// Metadata of entries whose key starts with `prefix`, in no particular order.
    public func list(prefix: String) -> [CacheEntryMetadata] {
        map.withLockedValue { map in
            map.entries.lazy.compactMap { $0 }.filter { $0.key.hasPrefix(prefix) }.map(\.metadata)
        }
    }

    public func statistics() -> MemoryTierStatistics {
        policy.withLockedValue { state in
            MemoryTierStatistics(
                entries: state.policy.count, bytes: state.policy.weight, limitBytes: configuration.maxBytes,
                limitEntries: configuration.maxEntries, releasedBytes: state.releasedBytes,
                decisions: state.policy.statistics)
        }
    }

    /// Removes `key` from the map and the policy; the caller holds the policy's lock.
    @discardableResult
    private func remove(_ key: String, state: inout PolicyState) -> CacheEntry? {
        guard let (entry, slot) = map.withLockedValue({ $0.remove(key) }) else { return nil }
        state.releasedBytes += state.policy.weight(of: slot)
        state.policy.remove(slot)
        return entry
    }
}

/// The policy and what its lock also guards.
struct PolicyState: Sendable {
    var policy: any EvictionPolicy<String>
    /// Cost of every entry that left the tier so far (evicted, replaced or removed): what the allocator got back.
    var releasedBytes = 0
    /// Scratch arrays, kept to spare an allocation per call.
    var drained: [UInt64] = []
    var victims: [Int] = []

    /// Hands the accesses recorded since the last drain to the policy, and `handle` after them.
    mutating func drain(_ reads: ReadBuffer, then handle: UInt64? = nil) {
        drained.removeAll(keepingCapacity: true)
        reads.drain(into: &drained)
        if let handle { drained.append(handle) }
        if !drained.isEmpty { policy.recordAccesses(drained) }
    }
}
