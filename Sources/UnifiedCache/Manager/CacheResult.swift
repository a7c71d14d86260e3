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
        let remaining = entry.expiresAt.timeIntervalSince(now)
        self.init(
            entry: entry, outcome: outcome, tier: tier,
            ageSeconds: tier == nil ? 0 : entry.age(at: now),
            remainingFreshSeconds: remaining > 0 ? Int(min(remaining.rounded(), Double(Int32.max))) : 0,
            stored: stored)
    }
}
