/// What the caller asked for besides the value.
public enum RequestControl: Sendable, Equatable {
    /// Serve fresh from a tier, else load (coalesced) from the upstream.
    case normal
    /// `?refresh=true` / `Cache-Control: no-cache`: fetch even if fresh; concurrent refreshes share one fetch.
    case refresh
    /// `Cache-Control: only-if-cached`: never fetch; serve fresh or stale within its window, else `notCached`.
    case onlyIfCached
}
