import UnifiedCache

/// The disk index's slot of each key: an open-addressing table of slot numbers (linear probing, at most half full,
/// deletion by backward shift) whose keys are the ones the index's metadata holds, looked up there. A
/// `[String: UInt32]` held every key a second time and kept at most three quarters of its buckets: 20 bytes a bucket,
/// 52 bytes an entry at 200,000 files (2^19 buckets); this table takes 4 bytes a bucket, 8 to 16 an entry, and
/// keeps the index within the bytes per disk entry CONTRACT §1 allows. Not thread-safe: the index's owner is.
struct SlotTable {
    /// Slot + 1 by bucket; 0 is an empty bucket. A power of two long.
    private var buckets = [UInt32](repeating: 0, count: 8)
    private(set) var count = 0

    private var mask: Int { buckets.count - 1 }

    /// The slot whose metadata holds `key`.
    func slot(of key: String, in metadata: [CacheEntryMetadata]) -> Int? {
        bucket(of: key, in: metadata).map { Int(buckets[$0]) - 1 }
    }

    /// Adds `slot`, whose metadata holds `key`, a key the table does not hold yet.
    mutating func add(_ slot: Int, key: String, in metadata: [CacheEntryMetadata]) {
        if (count + 1) * 2 > buckets.count { rehash(capacity: buckets.count * 2, in: metadata) }
        place(slot, hash: key.hashValue)
        count += 1
    }

    /// Removes `key`; its slot, if it was held. `metadata` still holds the key.
    mutating func remove(_ key: String, in metadata: [CacheEntryMetadata]) -> Int? {
        guard let bucket = bucket(of: key, in: metadata) else { return nil }
        let slot = Int(buckets[bucket]) - 1
        shiftBack(into: bucket, in: metadata)
        count -= 1
        return slot
    }

    /// Room for `count` keys in all without growing.
    mutating func reserveCapacity(_ count: Int, in metadata: [CacheEntryMetadata]) {
        guard count * 2 > buckets.count else { return }
        rehash(capacity: count * 2, in: metadata)
    }

    /// The slots held, in no particular order.
    var slots: some Sequence<Int> { buckets.lazy.filter { $0 != 0 }.map { Int($0) - 1 } }

    /// The bucket holding `key`'s slot: its run from its home bucket, up to the first empty one.
    private func bucket(of key: String, in metadata: [CacheEntryMetadata]) -> Int? {
        var bucket = key.hashValue & mask
        while buckets[bucket] != 0 {
            if metadata[Int(buckets[bucket]) - 1].key == key { return bucket }
            bucket = (bucket + 1) & mask
        }
        return nil
    }

    private mutating func place(_ slot: Int, hash: Int) {
        var bucket = hash & mask
        while buckets[bucket] != 0 { bucket = (bucket + 1) & mask }
        buckets[bucket] = UInt32(slot + 1)
    }

    /// Empties `hole`, moving back each following entry of the run that its home bucket lets move, so that every
    /// key stays reachable from its home bucket without tombstones.
    private mutating func shiftBack(into hole: Int, in metadata: [CacheEntryMetadata]) {
        var hole = hole
        var bucket = hole
        while true {
            bucket = (bucket + 1) & mask
            guard buckets[bucket] != 0 else { break }
            let home = metadata[Int(buckets[bucket]) - 1].key.hashValue & mask
            // The entry may fill the hole unless its home lies cyclically after the hole, up to where it is.
            if (bucket - home) & mask >= (bucket - hole) & mask {
                buckets[hole] = buckets[bucket]
                hole = bucket
            }
        }
        buckets[hole] = 0
    }

    private mutating func rehash(capacity: Int, in metadata: [CacheEntryMetadata]) {
        var size = 8
        while size < capacity { size *= 2 }
        let held = buckets
        buckets = [UInt32](repeating: 0, count: size)
        for entry in held where entry != 0 {
            let slot = Int(entry) - 1
            place(slot, hash: metadata[slot].key.hashValue)
        }
    }
}
