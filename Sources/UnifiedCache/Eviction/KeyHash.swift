/// The 32 bits both tiers find and weigh a key by: its hash value folded (`SlotTable`'s buckets, the policy's
/// frequency sketch). One function for the memory tier, the disk index and the disk tier's open files, so that a key
/// hashed once by a look-up is handed down (`MemoryTier.hash`, `SecondTier.loadNow(_:hash:)`) rather than hashed
/// again by each. Seeded per process, as `Hasher` is: never stored, never sent.
package enum KeyHash {
    package static func of<Key: Hashable>(_ key: Key) -> UInt32 {
        let value = UInt64(bitPattern: Int64(key.hashValue))
        return UInt32(truncatingIfNeeded: value ^ (value >> 32))
    }
}
