import Foundation

/// One answer of `UnifiedCacheManager.get`.
public struct CacheResult: Sendable, Equatable {
    public var entry: CacheEntry
    public var outcome: CacheOutcome
    /// The tier served from; `nil` when the value was fetched for this answer.
    public var tier: CacheTier?
    /// Whole seconds since the value was stored (0 for a fetched value).
    public var ageSeconds: Int
    /// Whole seconds of freshness left (0 when stale).
    public var remainingFreshSeconds: Int
    /// Whether a fetched value was stored (`false` for no-store values and results superseded by an invalidation).
    public var stored: Bool
    /// A forced refresh answered from a copy fetched within `--refresh-interval` (CONTRACT §15.1): a hit (`outcome`
    /// is `.hit`), not fetched again.
    public var refreshThrottled = false
    /// Where memory held a memory hit's entry, for `lookAgain`; not compared.
    var memoryPlace = MemoryPlace()

    public init(
        entry: CacheEntry, outcome: CacheOutcome, tier: CacheTier?, ageSeconds: Int, remainingFreshSeconds: Int,
        stored: Bool
    ) {
        self.entry = entry
        self.outcome = outcome
        self.tier = tier
        self.ageSeconds = ageSeconds
        self.remainingFreshSeconds = remainingFreshSeconds
        self.stored = stored
    }

    init(entry: CacheEntry, outcome: CacheOutcome, tier: CacheTier?, stored: Bool, now: Date) {
        self.init(
            entry: entry, outcome: outcome, tier: tier, ageSeconds: tier == nil ? 0 : entry.age(at: now),
            remainingFreshSeconds: Self.remainingFreshSeconds(of: entry, at: now), stored: stored)
    }

    static func remainingFreshSeconds(of entry: CacheEntry, at now: Date) -> Int {
        let remaining = entry.expiresAt.timeIntervalSince(now)
        return remaining > 0 ? Int(min(remaining.rounded(), Double(Int32.max))) : 0
    }

    /// Whether a memory hit at `now` on the value this result was read from would be this result again (the same
    /// age and freshness left, to the second).
    func isMemoryHitAgain(at now: Date) -> Bool {
        outcome == .hit && tier == .memory && !stored && !refreshThrottled && ageSeconds == entry.age(at: now)
            && remainingFreshSeconds == Self.remainingFreshSeconds(of: entry, at: now)
    }
}

/// A memory hit's handle in the memory tier, carried by its `CacheResult` and left out of its equality: two results
/// of one value are the same answer wherever memory held it.
struct MemoryPlace: Sendable, Equatable {
    var handle: UInt64?

    static func == (lhs: MemoryPlace, rhs: MemoryPlace) -> Bool { true }
}
