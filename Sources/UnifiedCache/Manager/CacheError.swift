/// Why a `get` produced no value.
public enum CacheError: Error, Sendable, Equatable {
    /// The upstream said not found, now or within the negative TTL (a remembered 404): how this request had the answer
    /// (`hit`: remembered, in `tier`; `miss`, `coalesced`, `refresh`: fetched now) and whether it was stored.
    case notFound(CacheOutcome, tier: CacheTier?, stored: Bool)
    /// The upstream said 429 and no stored copy was servable.
    case rateLimited(retryAfter: Int?)
    /// The upstream failed and no stored copy was servable.
    case upstreamFailed(FetchError)
    /// `only-if-cached` with nothing servable stored.
    case notCached
    /// The upstream gate kept the fetch from the upstream and no stored copy was servable.
    case refused(UpstreamRefusal)
}
