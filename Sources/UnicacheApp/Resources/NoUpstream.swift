import HTTPRouting
import Settings
import UnifiedCache

/// A domain with neither an upstream nor the demo (CONTRACT §11.1): its routes answer 503 `no-upstream` before the
/// cache is asked, so that a missing variable in production never serves invented data, not even a stale copy.
enum NoUpstream {
    static func problem(_ domain: UpstreamDomain) -> Problem {
        Problem.serviceUnavailable(
            detail: "Domain \(domain.rawValue) has no upstream: give --upstream \(domain.rawValue)=URL "
                + "(\(domain.environmentName)), or --demo \(domain.rawValue) (UNICACHE_DEMO) to serve invented demo data.",
            type: Problem.typeURI("no-upstream"))
    }

    /// Stands in for the missing fetcher behind the cache (a warm-up reaching it fails as unavailable); the routes
    /// never get this far.
    struct Fetcher: UnifiedCache.Fetcher {
        let domain: UpstreamDomain

        func fetch(_ request: FetchRequest) async throws(FetchError) -> FetchedValue {
            throw .unreachable("domain \(domain.rawValue) has no upstream")
        }
    }
}

/// What the service says about itself in `/stats` beside the counters: its version and each domain's source.
package struct ServiceFacts: Sendable, Equatable {
    public var version: String
    public var sources: [UpstreamDomain: UpstreamSource]

    public init(version: String = UnicacheVersion.current, sources: [UpstreamDomain: UpstreamSource]? = nil) {
        self.version = version
        self.sources = sources ?? Dictionary(uniqueKeysWithValues: UpstreamDomain.allCases.map { ($0, .demo) })
    }
}
