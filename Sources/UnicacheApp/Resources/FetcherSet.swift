import UnifiedCache

/// The fetcher of each upstream domain: an HTTP upstream where one is configured, the demo otherwise.
struct FetcherSet: Sendable {
    let health: any Fetcher
    let activities: any Fetcher
    let subscription: any Fetcher
    let progress: any Fetcher

    init(_ make: (UpstreamDomain) -> any Fetcher) {
        health = make(.health)
        activities = make(.activities)
        subscription = make(.subscription)
        progress = make(.progress)
    }

    subscript(domain: UpstreamDomain) -> any Fetcher {
        switch domain {
        case .health: return health
        case .activities: return activities
        case .subscription: return subscription
        case .progress: return progress
        }
    }
}
