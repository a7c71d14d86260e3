import UnifiedCache

/// What the tier knows about one stored file without reading it.
struct IndexedEntry: Sendable, Equatable {
    var metadata: CacheEntryMetadata
    /// Header plus body: the bytes the file takes, which the budget counts.
    var fileSize: Int
}

/// The stored files by key, with the `--eviction` policy that decides which go when the budget is full (weighed by
/// their sizes). Not thread-safe: the tier's actor owns it. Each entry's metadata sits in the slot its policy gave
/// it, and the policy's node holds the file's size; a key is held once, in its metadata, where `SlotTable` finds
/// it: the index's bytes per entry are documented (docs/operations.md) and bounded by CONTRACT §1.
struct DiskIndex {
    private var policy: any EvictionPolicy<String>
    private var slots = SlotTable()
    /// By slot; a free slot keeps no strings alive.
    private var metadata: [CacheEntryMetadata] = []
    private var victims: [Int] = []

    init(eviction: EvictionKind, limitBytes: Int) {
        policy = eviction.makePolicy(capacity: EvictionCapacity(weight: limitBytes))
    }

    var count: Int { slots.count }
    var totalBytes: Int { policy.weight }
    var decisions: EvictionStatistics { policy.statistics }

    /// Makes room for `count` entries in all, so that a start-up scan fills the index without growing it.
    mutating func reserveCapacity(_ count: Int) {
        policy.reserveCapacity(count)
        metadata.reserveCapacity(count)
        let kept = metadata
        slots.reserveCapacity(count) { Self.hash(kept[$0].key) }
    }

    /// The entry, no access recorded.
    subscript(key: String) -> IndexedEntry? {
        slot(of: key).map(entry(at:))
    }

    /// Records an access of `key`.
    mutating func touch(_ key: String) {
        touch(key, hash: KeyHash.of(key))
    }

    /// Records an access of `key`, whose `KeyHash` is `hash` (a read answered on an HTTP thread: the memory tier's
    /// look-up hashed the key).
    mutating func touch(_ key: String, hash: UInt32) {
        assert(hash == KeyHash.of(key), "a key's hash is its KeyHash")
        if let slot = slot(of: key, hash: hash) { policy.recordAccess(slot) }
    }

    /// Changes the size of `key`'s file (re-sealed in place), no access recorded.
    mutating func resize(_ key: String, fileSize: Int) {
        if let slot = slot(of: key) { policy.update(slot, weight: fileSize, access: false) }
    }

    /// Adds `key` as a new entry (found at start-up: as the least recently used), or replaces what is known of it (an
    /// access).
    mutating func insert(_ key: String, _ value: IndexedEntry, leastRecent: Bool = false) {
        assert(key == value.metadata.key, "an entry is indexed under its own key")
        let hash = KeyHash.of(key)
        if let slot = slot(of: key, hash: hash) {
            metadata[slot] = value.metadata
            policy.update(slot, weight: value.fileSize, access: !leastRecent)
            return
        }
        let weight = value.fileSize
        let slot =
            leastRecent ? policy.insertEldest(hash: hash, weight: weight) : policy.insert(hash: hash, weight: weight)
        if slot == metadata.count { metadata.append(value.metadata) } else { metadata[slot] = value.metadata }
        addSlot(slot, hash: Int(hash))
    }

    @discardableResult
    mutating func remove(_ key: String) -> IndexedEntry? {
        guard let slot = removeSlot(hash: Self.hash(key), where: { [metadata] in metadata[$0].key == key }) else {
            return nil
        }
        let value = entry(at: slot)
        policy.remove(slot)
        clear(slot)
        return value
    }

    /// The keys the policy lets go so that the files fit the budget, never `keeping`; they leave the index.
    mutating func evict(keeping key: String?) -> [String] {
        victims.removeAll(keepingCapacity: true)
        policy.evict(keeping: key.flatMap(slot(of:)), into: &victims)
        return victims.map { slot in
            let key = metadata[slot].key
            _ = removeSlot(hash: Self.hash(key), where: { $0 == slot })
            clear(slot)
            return key
        }
    }

    /// The slot whose metadata holds `key`.
    private func slot(of key: String) -> Int? { slot(of: key, hash: KeyHash.of(key)) }

    /// The slot whose metadata holds `key`, whose `KeyHash` is `hash`.
    private func slot(of key: String, hash: UInt32) -> Int? {
        metadata.withUnsafeBufferPointer { metadata in slots.slot(hash: Int(hash)) { metadata[$0].key == key } }
    }

    /// A key's place in the slot table: its `KeyHash`, the policy's too, so that a new key is hashed once.
    private static func hash(_ key: String) -> Int { Int(KeyHash.of(key)) }

    /// Puts `slot`, whose metadata holds a key hashed to `hash`, in the slot table. The index keeps no hashes (its
    /// bytes per entry are bounded): the table is told the others' from their keys when it moves them.
    private mutating func addSlot(_ slot: Int, hash: Int) {
        let metadata = self.metadata
        slots.add(slot, hash: hash) { Self.hash(metadata[$0].key) }
    }

    /// Takes the slot `holdsKey` confirms out of the slot table (its metadata still holds its key).
    private mutating func removeSlot(hash: Int, where holdsKey: (Int) -> Bool) -> Int? {
        let metadata = self.metadata
        return slots.remove(hash: hash, where: holdsKey) { Self.hash(metadata[$0].key) }
    }

    /// The metadata of every entry `predicate` takes, in no particular order (listings, expiry sweeps, rekeying; a
    /// fleet's removal reads fields in place with `keys(in:)`). The slots are read in their order (a free one has an
    /// empty key), not in the slot table's hash order, and only the entries taken are kept.
    func metadata(where predicate: (CacheEntryMetadata) -> Bool) -> [CacheEntryMetadata] {
        metadata.filter { !$0.key.isEmpty && predicate($0) }
    }

    /// The keys of the entries `scope` covers, each entry's fields read where they lie (its key only when the scope
    /// needs it), as the memory tier reads its own: a copy of each entry's metadata was most of a scan's time.
    func keys(in scope: KeyScope) -> [String] {
        metadata.withUnsafeBufferPointer { metadata in
            metadata.indices.compactMap { slot in
                let namespace = metadata[slot].namespace
                guard !metadata[slot].key.isEmpty,
                    scope.matches(key: metadata[slot].key, namespace: namespace, user: metadata[slot].user)
                else { return nil }
                return metadata[slot].key
            }
        }
    }

    private func entry(at slot: Int) -> IndexedEntry {
        IndexedEntry(metadata: metadata[slot], fileSize: policy.weight(of: slot))
    }

    private mutating func clear(_ slot: Int) {
        metadata[slot].key = ""
        metadata[slot].user = nil
    }
}
