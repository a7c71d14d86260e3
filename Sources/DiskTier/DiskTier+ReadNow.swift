import NIOConcurrencyHelpers
import UnifiedCache

extension DiskTier {
    /// `key`'s entry read on the calling thread (a disk hit answered by the HTTP thread, without the tier's
    /// queue), or `nil` whenever `load` must decide: the tier degraded or holding a file it could not delete, or
    /// the file missing, unreadable, not a regular file, corrupt, sealed under a key not in the ring, or past its
    /// servable life. Nothing is deleted or counted here; the read is noted so that the index's policy counts it
    /// (`RecentReads`). `hash`, the key's `KeyHash` made by the memory tier's look-up, finds the file kept open and the
    /// index's entry, so that a disk hit hashes its key once.
    public nonisolated func loadNow(_ key: String, hash: UInt32) -> CacheEntry? {
        assert(hash == KeyHash.of(key), "a key's hash is its KeyHash")
        guard counters.readsNow else { return nil }
        guard
            let bytes = fileSystem.readWhole(
                entry: key, hash: Int(hash), in: layout.root, at: { layout.path(for: key) },
                upTo: configuration.limitBytes),
            let entry = try? codec.decode(bytes, fileSize: bytes.count, key: key).entry,
            clock.now() < entry.staleUntil
        else { return nil }
        recentReads.note(key, hash: hash)
        return entry
    }
}

/// Keys read without the tier's queue, waiting to be recorded in its index (bounded: past the bound the
/// oldest notes are dropped, which only costs the policy an access or two).
final class RecentReads: Sendable {
    private static let bound = 4096
    /// A key read, with its `KeyHash`.
    typealias Read = (key: String, hash: UInt32)

    private let keys = NIOLockedValueBox<[Read]>([])

    func note(_ key: String, hash: UInt32) {
        keys.withLockedValue { keys in
            if keys.count >= Self.bound { keys.removeFirst(keys.count / 2) }
            keys.append((key, hash))
        }
    }

    /// The noted keys, oldest first; forgets them.
    func drain() -> [Read] {
        keys.withLockedValue { keys in
            defer { keys.removeAll(keepingCapacity: true) }
            return keys
        }
    }
}
