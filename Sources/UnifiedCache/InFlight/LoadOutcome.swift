/// What a shared load produced; each waiter turns it into its own `CacheResult` and statistic.
enum LoadOutcome: Sendable {
    /// Found fresh in a tier (a value or a remembered "not found").
    case cached(CacheEntry, CacheTier)
    /// Fetched now; `stored` is false for no-store values and superseded loads.
    case fetched(CacheEntry, stored: Bool)
    /// Another instance of the fleet fetched it (its fill lease); this instance waited for its value.
    case joined(CacheEntry)
    /// The fetch failed (or the upstream gate refused it) and a stored copy within its window was served.
    case stale(CacheEntry, CacheTier, CacheOutcome.StaleReason)
    /// No value: upstream 404, 429 or failure with nothing servable.
    case failed(CacheError)
}
