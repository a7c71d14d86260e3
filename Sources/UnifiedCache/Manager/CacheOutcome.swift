/// How a `get` was answered; every `get` records exactly one of these (see `CacheStatistics`).
public enum CacheOutcome: Sendable, Equatable {
    public enum StaleReason: Sendable, Equatable {
        /// The upstream failed (error, timeout, 5xx, 429) and a stored copy within its stale window was served.
        case upstreamError
        /// A background refresh (refresh-ahead) is running; the stored copy was served meanwhile.
        case backgroundRefresh
        /// `only-if-cached` found only a copy past freshness but within its stale window.
        case onlyIfCached
        /// The upstream gate kept the fetch from the upstream (budget, 429 pause, open circuit).
        case upstreamRefused(UpstreamRefusal.Reason)
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
