/// The memory tier's entries: each in the slot its policy gave it, found by key through its handle (the slot and its
/// generation, which the read buffer records). Not thread-safe: the tier's `map` lock guards it.
struct MemoryMap: Sendable {
    private(set) var handles: [String: UInt64] = [:]
    /// By slot; `nil` in a free slot.
    private(set) var entries: [CacheEntry?] = []
    /// By slot, the generation of the handle its entry was stored under (read only where `entries` holds one), so that
    /// a slot found from an earlier handle gives its current handle without the key's look-up.
    private var generations: [UInt32] = []

    static func slot(of handle: UInt64) -> Int { Int(truncatingIfNeeded: handle & 0xFFFF_FFFF) }

    func lookup(_ key: String) -> (entry: CacheEntry, handle: UInt64)? {
        guard let handle = handles[key], let entry = entries[Self.slot(of: handle)] else { return nil }
        return (entry, handle)
    }

    /// The handle of `expected`'s key's entry when it holds the value `expected` was read from, as far as an answer
    /// can tell (the same kind, time stored, expiry, etag and content type), read where it lies: no copy of the entry.
    func handle(sameAs expected: CacheEntry) -> UInt64? {
        guard let handle = handles[expected.key] else { return nil }
        return holds(expected, in: Self.slot(of: handle)) ? handle : nil
    }

    /// `handle(sameAs: expected)` when `expected` was read from the slot `earlier` names (a handle of that read,
    /// perhaps of an older generation): the slot's entry is looked at first, and the key looked up (hashed) only when
    /// there is no such handle or the slot no longer holds that key.
    func handle(sameAs expected: CacheEntry, near earlier: UInt64?) -> UInt64? {
        guard let slot = earlier.map(Self.slot(of:)), slot < entries.count,
            entries.withUnsafeBufferPointer({ $0[slot]?.key == expected.key })
        else { return handle(sameAs: expected) }
        return holds(expected, in: slot) ? UInt64(generations[slot]) << 32 | UInt64(slot) : nil
    }

    /// Whether the entry in `slot` (its key's) is the value `expected` was read from, as far as an answer can tell.
    private func holds(_ expected: CacheEntry, in slot: Int) -> Bool {
        entries.withUnsafeBufferPointer { entries in
            entries[slot]?.storedAt == expected.storedAt && entries[slot]?.expiresAt == expected.expiresAt
                && entries[slot]?.kind == expected.kind && entries[slot]?.etag == expected.etag
                && entries[slot]?.contentType == expected.contentType
        }
    }

    /// Puts `entry` in `slot` (a new slot, or its key's own) under `handle`.
    mutating func store(_ entry: CacheEntry, slot: Int, handle: UInt64) {
        if slot == entries.count {
            entries.append(entry)
            generations.append(UInt32(truncatingIfNeeded: handle >> 32))
        } else {
            entries[slot] = entry
            generations[slot] = UInt32(truncatingIfNeeded: handle >> 32)
        }
        handles[entry.key] = handle
    }

    /// Empties `slot` (a victim of the policy).
    mutating func clear(_ slot: Int) {
        guard slot < entries.count, let entry = entries[slot] else { return }
        handles[entry.key] = nil
        entries[slot] = nil
    }

    /// Removes `key`; returns its entry and the slot it had.
    mutating func remove(_ key: String) -> (CacheEntry, Int)? {
        guard let handle = handles.removeValue(forKey: key) else { return nil }
        let slot = Self.slot(of: handle)
        defer { entries[slot] = nil }
        return entries[slot].map { ($0, slot) }
    }

    /// Removes every entry `scope` covers; returns their keys and slots. Each entry's fields are read where it lies,
    /// its key only when the scope needs it: testing a copy of each entry retained and released its six references,
    /// a cache miss each, most of a scan's time.
    mutating func removeAll(in scope: KeyScope) -> [(key: String, slot: Int)] {
        let covered = entries.withUnsafeBufferPointer { entries in
            entries.indices.filter { slot in
                guard let namespace = entries[slot]?.namespace else { return false }
                return scope.matches(key: entries[slot]?.key ?? "", namespace: namespace, user: entries[slot]?.user)
            }
        }
        return covered.compactMap { slot in
            guard let key = entries[slot]?.key else { return nil }
            handles[key] = nil
            entries[slot] = nil
            return (key, slot)
        }
    }
}
