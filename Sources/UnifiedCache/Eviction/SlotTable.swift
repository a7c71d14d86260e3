/// A tier's slot of each key: an open-addressing table of slot numbers (linear probing, at most half full, deletion
/// by backward shift). It holds no key and no hash: the tier keeps both by slot (the memory tier each key's hash, the
/// disk index each entry's metadata), so a look-up is given the key's hash and confirms a candidate slot itself, and
/// a change that moves slots is told the hash of a slot. A `[String: UInt32]` held every key a second time, kept at
/// most three quarters of its 20-byte buckets (52 bytes an entry at 200,000 files: 2^19 buckets) and hashed the key
/// again at each call; this table takes 4 bytes a bucket, 8 to 16 an entry. Not thread-safe: the tier's lock or
/// actor guards it.
package struct SlotTable: Sendable {
    /// Slot + 1 by bucket; 0 is an empty bucket. A power of two long.
    private var buckets = [UInt32](repeating: 0, count: 8)
    package private(set) var count = 0

    /// Bytes the table takes per entry at most (a quarter of the buckets taken, just after they doubled).
    package static var bytesPerEntry: Int { 4 * MemoryLayout<UInt32>.stride }

    package init() {}

    private var mask: Int { buckets.count - 1 }

    /// The slot of the key hashed to `hash` that `holdsKey` confirms (it is offered each slot of the run from that
    /// hash's home bucket), or `nil`.
    package func slot(hash: Int, where holdsKey: (Int) -> Bool) -> Int? {
        bucket(hash: hash, where: holdsKey).map { Int(buckets[$0]) - 1 }
    }

    /// Adds `slot` under `hash`, for a key the table does not hold yet; `hashOf` tells the hash of each slot held
    /// when the table grows.
    package mutating func add(_ slot: Int, hash: Int, hashOf: (Int) -> Int) {
        if (count + 1) * 2 > buckets.count { rehash(capacity: buckets.count * 2, hashOf: hashOf) }
        place(slot, hash: hash)
        count += 1
    }

    /// Removes the slot `slot(hash:where:)` finds, and returns it; `hashOf` tells the hash of each slot held (it is
    /// asked for those that may move back).
    package mutating func remove(hash: Int, where holdsKey: (Int) -> Bool, hashOf: (Int) -> Int) -> Int? {
        guard let bucket = bucket(hash: hash, where: holdsKey) else { return nil }
        let slot = Int(buckets[bucket]) - 1
        shiftBack(into: bucket, hashOf: hashOf)
        count -= 1
        return slot
    }

    /// Room for `count` keys in all without growing.
    package mutating func reserveCapacity(_ count: Int, hashOf: (Int) -> Int) {
        guard count * 2 > buckets.count else { return }
        rehash(capacity: count * 2, hashOf: hashOf)
    }

    /// The slots held, in no particular order.
    package var slots: some Sequence<Int> { buckets.lazy.filter { $0 != 0 }.map { Int($0) - 1 } }

    /// The bucket of the slot `holdsKey` confirms: in the run from `hash`'s home bucket, up to the first empty one.
    private func bucket(hash: Int, where holdsKey: (Int) -> Bool) -> Int? {
        buckets.withUnsafeBufferPointer { buckets in
            let mask = buckets.count - 1
            var bucket = hash & mask
            while buckets[bucket] != 0 {
                if holdsKey(Int(buckets[bucket]) - 1) { return bucket }
                bucket = (bucket + 1) & mask
            }
            return nil
        }
    }

    private mutating func place(_ slot: Int, hash: Int) {
        var bucket = hash & mask
        while buckets[bucket] != 0 { bucket = (bucket + 1) & mask }
        buckets[bucket] = UInt32(slot + 1)
    }

    /// Empties `hole`, moving back each following entry of the run that its home bucket lets move, so that every
    /// key stays reachable from its home bucket without tombstones.
    private mutating func shiftBack(into hole: Int, hashOf: (Int) -> Int) {
        var hole = hole
        var bucket = hole
        while true {
            bucket = (bucket + 1) & mask
            guard buckets[bucket] != 0 else { break }
            let home = hashOf(Int(buckets[bucket]) - 1) & mask
            // The entry may fill the hole unless its home lies cyclically after the hole, up to where it is.
            if (bucket - home) & mask >= (bucket - hole) & mask {
                buckets[hole] = buckets[bucket]
                hole = bucket
            }
        }
        buckets[hole] = 0
    }

    private mutating func rehash(capacity: Int, hashOf: (Int) -> Int) {
        var size = 8
        while size < capacity { size *= 2 }
        let held = buckets
        buckets = [UInt32](repeating: 0, count: size)
        for entry in held where entry != 0 {
            let slot = Int(entry) - 1
            place(slot, hash: hashOf(slot))
        }
    }
}
