/// What one memory-tier entry really costs the process, so that `--memory-limit` bounds resident memory and not
/// just the sum of bodies (Caffeine documents its per-entry overhead the same way).
///
/// The model, per entry, on 64-bit Linux with glibc's malloc:
/// - every heap object is a malloc chunk: its size plus an 8-byte header, rounded up to 16, at least 32 bytes;
/// - the body is a Swift array: a 32-byte header and its bytes (the manager stores bodies compacted, see
///   `compacted(_:)`, so that a body which grew while it was read holds no spare capacity for its life);
/// - a string longer than 15 UTF-8 bytes is a native string object: a 32-byte header, the bytes and a NUL; shorter
///   ones live inside the `String` value (the key, shared with the index's copy, is counted once);
/// - the entry's fields sit in an array indexed by its policy slot, its handle's generation in a second and the
///   policy's node (weight, links, hash) in a third, all doubling as they grow, so up to two of each per entry; the
///   dictionary slot (key 16 + handle 8 bytes) at a load factor between 3/8 and 3/4 is up to 64 bytes; the frequency
///   sketch, a power of two of 8-byte words at least the entry count, up to 16.
///
/// Measured before the policies (`mallinfo2().uordblks` before and after inserting 50,000 entries into an empty
/// tier, in a process doing nothing else): 1 KiB bodies with 12-byte keys, a 24-byte content type and the 66-byte
/// quoted ETag cost 1,231 bytes each against the model's 1,616 then; 64-byte bodies with 40-byte keys 566 against
/// 752 (the node array and dictionary were then 262 bytes per entry, the model allowed 384 for their worst case just
/// after they doubled; it allows 376 now). The model stays on the upper side of what was measured, as a budget must.
package enum EntryCost {
    /// Entry and node arrays with their slack, dictionary slot and sketch, on top of the heap objects.
    public static let fixed =
        2 * (MemoryLayout<CacheEntry?>.stride + MemoryLayout<UInt32>.stride + RegionLists.nodeStride) + 64 + 16

    public static func of(_ entry: CacheEntry) -> Int {
        fixed + array(capacity: entry.body.count) + string(entry.key) + string(entry.namespace)
            + (entry.user.map(string) ?? 0) + string(entry.contentType) + string(entry.etag)
    }

    /// `body` without spare capacity (a copy only when it has some).
    package static func compacted(_ body: [UInt8]) -> [UInt8] {
        body.capacity > body.count ? Array(body[...]) : body
    }

    /// glibc: an 8-byte chunk header, 16-byte alignment, 32 bytes at least.
    static func mallocChunk(_ bytes: Int) -> Int { max(32, (bytes + 8 + 15) & ~15) }

    static func array(capacity: Int) -> Int { capacity == 0 ? 0 : mallocChunk(32 + capacity) }

    static func string(_ text: String) -> Int {
        let count = text.utf8.count
        return count <= 15 ? 0 : mallocChunk(32 + count + 1)
    }
}
