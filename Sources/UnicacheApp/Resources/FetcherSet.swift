import Settings
import UnifiedCache

/// The fetcher of each upstream domain: an HTTP upstream where one is configured, the demo otherwise (behind the
/// domain's upstream gate).
typealias FetcherSet = PerDomain<any Fetcher>

/// One value for each upstream domain, made once per domain.
struct PerDomain<Value: Sendable>: Sendable {
    let health: Value
    let activities: Value
    let subscription: Value
    let progress: Value

    init(_ make: (UpstreamDomain) -> Value) {
        health = make(.health)
        activities = make(.activities)
        subscription = make(.subscription)
        progress = make(.progress)
    }

    subscript(domain: UpstreamDomain) -> Value {
        switch domain {
        case .health: return health
        case .activities: return activities
        case .subscription: return subscription
        case .progress: return progress
        }
    }
}
