import UnifiedCache

/// A domain's request budget: at most `limit` requests in any window of `window` (the tightest of its windows when
/// it has several). The gate asks it right before a request is sent. A protocol so that a fleet-wide counter (one
/// shared store for every instance) can replace the local one.
public protocol UpstreamRateCounter: Sendable {
    var limit: Int { get }
    var window: Duration { get }
    /// Spends one request at `now` if the budget allows it. Background work leaves the last tenth of each
    /// window's budget to foreground requests.
    func take(at now: Duration, background: Bool) async -> RateDecision
    /// What `take` would decide at `now`, spending nothing.
    func check(at now: Duration, background: Bool) async -> RateDecision
    /// Requests the budget would still allow at `now` without spending any (the fewest over its windows).
    func remaining(at now: Duration) async -> Int
}

public enum RateDecision: Sendable, Equatable {
    case granted
    /// Over the budget; `retryAfter`: until the budget allows a request of that kind again.
    case refused(retryAfter: Duration)
}

extension UpstreamRateCounter {
    /// Requests kept from background work: a tenth of the budget, rounded up.
    public var backgroundReserve: Int { Self.backgroundReserve(of: limit) }

    /// A tenth of `limit`, rounded up.
    public static func backgroundReserve(of limit: Int) -> Int { (limit + 9) / 10 }
}
