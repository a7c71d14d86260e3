/// The memory tier's entries: each in the slot its policy gave it, found by key through the slot table and
/// given out with its handle (the slot and its generation, which the read buffer records). Not thread-safe: the
/// tier's `map` lock guards it.
///
/// A key is hashed once per call, by the caller (`hash(_:)`: its `KeyHash`, which the policy counts a new entry by
/// too), and the hash kept by slot: an entry leaves the table without its key hashed again.
struct MemoryMap: Sendable {
    private var index = SlotTable()
    /// By slot; `nil` in a free slot.
    private(set) var entries: [CacheEntry?] = []
    /// By slot, the generation of the handle its entry was stored under (read only where `entries` holds one), so that
    /// a slot found from an earlier handle gives its current handle without the key's look-up.
    private var generations: [UInt32] = []
    /// By slot, its entry's key's hash (read only where `entries` holds one): the slot table's, so that a key is
    /// compared only in a slot whose hash is its own, and a slot moved in the table without its key hashed again.
    private var hashes: [UInt32] = []

    static func slot(of handle: UInt64) -> Int { Int(truncatingIfNeeded: handle & 0xFFFF_FFFF) }

    /// The hash `key` is found by here and counted by in the policy's sketch.
    static func hash(_ key: String) -> UInt32 { KeyHash.of(key) }

    /// The slot of `key`, whose `hash(_:)` is `hash`.
    private func slot(of key: String, hash: UInt32) -> Int? {
        entries.withUnsafeBufferPointer { entries in
            hashes.withUnsafeBufferPointer { hashes in
                index.slot(hash: Int(hash)) { hashes[$0] == hash && entries[$0]?.key == key }
            }
        }
    }

    private func handle(of slot: Int) -> UInt64 { UInt64(generations[slot]) << 32 | UInt64(slot) }

    func lookup(_ key: String, hash: UInt32) -> (entry: CacheEntry, handle: UInt64)? {
        guard let slot = slot(of: key, hash: hash), let entry = entries[slot] else { return nil }
        return (entry, handle(of: slot))
    }

    /// The handle of `key`'s entry, `nil` when there is none.
    func handle(of key: String, hash: UInt32) -> UInt64? {
        slot(of: key, hash: hash).map(handle(of:))
    }

    /// The handle of `expected`'s key's entry when it holds the value `expected` was read from, as far as an answer
    /// can tell (the same kind, time stored, expiry, etag and content type), read where it lies: no copy of the entry.
    func handle(sameAs expected: CacheEntry) -> UInt64? {
        guard let slot = slot(of: expected.key, hash: Self.hash(expected.key)) else { return nil }
        return holds(expected, in: slot) ? handle(of: slot) : nil
    }

    /// `handle(sameAs: expected)` when `expected` was read from the slot `earlier` names (a handle of that read,
    /// perhaps of an older generation): the slot's entry is looked at first, and the key looked up (hashed) only when
    /// there is no such handle or the slot no longer holds that key.
    func handle(sameAs expected: CacheEntry, near earlier: UInt64?) -> UInt64? {
        guard let slot = earlier.map(Self.slot(of:)), slot < entries.count,
            entries.withUnsafeBufferPointer({ $0[slot]?.key == expected.key })
        else { return handle(sameAs: expected) }
        return holds(expected, in: slot) ? handle(of: slot) : nil
    }

    /// Whether the entry in `slot` (its key's) is the value `expected` was read from, as far as an answer can tell.
    private func holds(_ expected: CacheEntry, in slot: Int) -> Bool {
        entries.withUnsafeBufferPointer { entries in
            entries[slot]?.storedAt == expected.storedAt && entries[slot]?.expiresAt == expected.expiresAt
                && entries[slot]?.kind == expected.kind && entries[slot]?.etag == expected.etag
                && entries[slot]?.contentType == expected.contentType
        }
    }

    /// Puts `entry`, whose key's `hash(_:)` is `hash`, in `slot` under `handle`: a free slot (a new one, or one the
    /// policy freed), or the slot its key already has.
    mutating func store(_ entry: CacheEntry, hash: UInt32, slot: Int, handle: UInt64) {
        let generation = UInt32(truncatingIfNeeded: handle >> 32)
        let isNew = slot == entries.count || entries[slot] == nil
        if slot == entries.count {
            entries.append(entry)
            generations.append(generation)
            hashes.append(hash)
        } else {
            entries[slot] = entry
            generations[slot] = generation
            hashes[slot] = hash
        }
        guard isNew else { return }
        let hashes = hashes
        index.add(slot, hash: Int(hash)) { Int(hashes[$0]) }
    }

    /// Empties `slot` (a victim of the policy).
    mutating func clear(_ slot: Int) {
        guard slot < entries.count, entries[slot] != nil else { return }
        release(slot)
    }

    /// Removes `key`; returns its entry and the slot it had.
    mutating func remove(_ key: String) -> (CacheEntry, Int)? {
        guard let slot = slot(of: key, hash: Self.hash(key)), let entry = entries[slot] else { return nil }
        release(slot)
        return (entry, slot)
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
            release(slot)
            return (key, slot)
        }
    }

    /// Takes the entry in `slot` out of the slot table (by the hash kept for it) and the slot.
    private mutating func release(_ slot: Int) {
        let kept = hashes
        _ = index.remove(hash: Int(kept[slot]), where: { $0 == slot }) { Int(kept[$0]) }
        entries[slot] = nil
    }
}
