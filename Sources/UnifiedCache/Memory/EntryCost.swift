/// What one memory-tier entry really costs the process, so that `--memory-limit` bounds resident memory and not
/// just the sum of bodies (Caffeine documents its per-entry overhead the same way).
///
/// The model, per entry, on 64-bit Linux with glibc's malloc:
/// - every heap object is a malloc chunk: its size plus an 8-byte header, rounded up to 16, at least 32 bytes;
/// - the body is a Swift array: a 32-byte header and its bytes (the manager stores bodies compacted, see
///   `compacted(_:)`, so that a body which grew while it was read holds no spare capacity for its life);
/// - a string longer than 15 UTF-8 bytes is a native string object: a 32-byte header, the bytes and a NUL; shorter
///   ones live inside the `String` value;
/// - the entry's fields sit in an array indexed by its policy slot, its handle's generation and its key's hash in two
///   more and the policy's node (weight, links, hash) in a fourth, all doubling as they grow, so up to two of each
///   per entry; the slot table (`SlotTable`: 4-byte buckets, a quarter to a half of them taken) up to 16 bytes; the
///   frequency sketch, a power of two of 8-byte words at least the entry count, up to 16.
///
/// Measured before the policies (`mallinfo2().uordblks` before and after inserting 50,000 entries into an empty
/// tier, in a process doing nothing else): 1 KiB bodies with 12-byte keys, a 24-byte content type and the 66-byte
/// quoted ETag cost 1,231 bytes each against the model's 1,616 then; 64-byte bodies with 40-byte keys 566 against
/// 752 (the node array and dictionary were then 262 bytes per entry, the model allowed 384 for their worst case just
/// after they doubled; it allows 336 now, with the slot table in the dictionary's place). The model stays on the upper
/// side of what was measured, as a budget must.
package enum EntryCost {
    /// The arrays by slot with their slack, the slot table and the sketch, on top of the heap objects.
    public static let fixed =
        2 * (MemoryLayout<CacheEntry?>.stride + 2 * MemoryLayout<UInt32>.stride + RegionLists.nodeStride)
        + SlotTable.bytesPerEntry + 16

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
