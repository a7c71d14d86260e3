import Foundation

/// The hook for a tier below memory (the disk tier). The manager consults it on a memory miss,
/// writes through to it, and sends every invalidation to it before acknowledging.
///
/// Implementations never throw to the manager: faults degrade to a miss (load), a dropped
/// write (store, counted), and are reported through `statistics()` and `health()`. Class-bound, as `SharedTier`.
public protocol SecondTier: AnyObject, Sendable {
    /// The stored entry for `key`, verified, or `nil`.
    func load(_ key: String) async -> CacheEntry?
    /// The stored entry for `key` read on the calling thread when that is cheap and clean (a healthy tier, a
    /// verified file), else `nil`: `load` then decides (and handles a missing, corrupt or unreadable entry). `hash` is
    /// the key's `KeyHash` (the memory tier's look-up made it: the tier need not hash the key again).
    func loadNow(_ key: String, hash: UInt32) -> CacheEntry?
    /// Stores (or replaces) the entry; returns once it is durable in the tier, `false` if it could not be written.
    @discardableResult
    func store(_ entry: CacheEntry) async -> Bool
    /// Removes `key` (`removed` names it if it was present).
    @discardableResult
    func remove(_ key: String) async -> SecondTierRemoval
    /// Removes every entry `scope` covers (also those an earlier removal could not delete). A scope, not a predicate
    /// over a copy of each entry's metadata: a fleet's event for one user is applied by this scan, and the tier reads
    /// what the scope needs of each entry where it lies.
    @discardableResult
    func removeAll(in scope: KeyScope) async -> SecondTierRemoval
    /// Metadata of stored entries whose key starts with `prefix`, at most `limit`.
    func list(prefix: String, limit: Int) async -> [CacheEntryMetadata]
    /// Counters and sizes for /stats.
    func statistics() -> SecondTierStatistics
    /// `nil` when healthy, else a human-readable reason (for /stats).
    func health() -> String?
    /// `health()` after checking the tier now (for /readyz: the data dir's writability as it is, not as the last
    /// write or periodic check found it).
    func checkedHealth() async -> String?
    /// Re-seals under the key ring's primary every stored entry that is not (CONTRACT §9.3), never overwriting a
    /// newer value; entries that do not open are deleted.
    func rekey() async -> RekeyReport
}

extension SecondTier {
    /// A tier that cannot read on the caller's thread leaves every read to `load`.
    public func loadNow(_ key: String, hash: UInt32) -> CacheEntry? { nil }

    /// `loadNow(_:hash:)` for a key not hashed yet.
    public func loadNow(_ key: String) -> CacheEntry? { loadNow(key, hash: KeyHash.of(key)) }

    /// A tier with nothing to check now answers its health as it stands.
    public func checkedHealth() async -> String? { health() }

    /// A tier that stores nothing at rest has nothing to re-seal.
    public func rekey() async -> RekeyReport { RekeyReport() }
}

/// What a removal from the second tier did.
public struct SecondTierRemoval: Sendable, Equatable {
    /// The keys whose entries were removed.
    public var removed: [String]
    /// Why some entries it was asked to remove are still stored (a file that could not be deleted: never served by this
    /// instance meanwhile, but found again by a restart; a later removal tries again), or nil.
    public var failure: String?

    public init(removed: [String] = [], failure: String? = nil) {
        self.removed = removed
        self.failure = failure
    }
}

public struct SecondTierStatistics: Sendable, Equatable {
    public var entries = 0, bytes = 0, limitBytes = 0
    /// Files that did not verify (deleted), and the writes and reads that failed.
    public var corrupt = 0, writeErrors = 0, readErrors = 0
    /// Sealed entries that did not open (CONTRACT §9.2): deleted, never served.
    public var undecryptable = 0
    /// The policy's admissions and window; its `evictions` are the tier's own count (kept across an index rebuild).
    public var decisions = EvictionStatistics()

    public init() {}

    /// Entries removed to keep the budget.
    public var evictions: Int { decisions.evictions }
}
