import Foundation

/// What the caller asked for besides the value.
public enum RequestControl: Sendable, Equatable {
    /// Serve fresh from a tier, else load (coalesced) from the upstream.
    case normal
    /// `?refresh=true` / `Cache-Control: no-cache`: fetch even if fresh; concurrent refreshes share one fetch.
    case refresh
    /// `Cache-Control: only-if-cached`: never fetch; serve fresh or stale within its window, else `notCached`.
    case onlyIfCached
}

/// The tier a value was served from.
public enum CacheTier: String, Sendable, Equatable {
    case memory
    case disk
}

/// How a `get` was answered; every `get` records exactly one of these (see `CacheStatistics`).
public enum CacheOutcome: Sendable, Equatable {
    public enum StaleReason: Sendable, Equatable {
        /// The upstream failed (error, timeout, 5xx, 429) and a stored copy within its stale window was served.
        case upstreamError
        /// A background refresh (refresh-ahead) is running; the stored copy was served meanwhile.
        case backgroundRefresh
        /// `only-if-cached` found only a copy past freshness but within its stale window.
        case onlyIfCached
    }

    /// A fresh stored copy.
    case hit
    /// This request fetched.
    case miss
    /// Waited for another request's load of the same key.
    case coalesced
    /// A stored copy past its freshness (or, for `upstreamError`, any stored copy after a failed fetch).
    case stale(reason: StaleReason)
    /// A forced fetch (`RequestControl.refresh`).
    case refresh
}

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
            remainingFreshSeconds: remaining > 0 ? Int(min(remaining, Double(Int32.max))) : 0,
            stored: stored)
    }
}

/// Why a `get` produced no value.
public enum CacheError: Error, Sendable, Equatable {
    /// The upstream said not found, now or within the negative TTL (a remembered 404).
    case notFound
    /// The upstream said 429 and no stored copy was servable.
    case rateLimited(retryAfter: Int?)
    /// The upstream failed and no stored copy was servable.
    case upstreamFailed(FetchError)
    /// `only-if-cached` with nothing servable stored.
    case notCached
}

/// One row of `UnifiedCacheManager.list(prefix:limit:)`.
public struct EntryListing: Sendable, Equatable {
    public var key: String
    public var namespace: String
    public var bytes: Int
    public var tier: CacheTier
    public var storedAt: Date
    public var expiresAt: Date

    public init(key: String, namespace: String, bytes: Int, tier: CacheTier, storedAt: Date, expiresAt: Date) {
        self.key = key
        self.namespace = namespace
        self.bytes = bytes
        self.tier = tier
        self.storedAt = storedAt
        self.expiresAt = expiresAt
    }
}
