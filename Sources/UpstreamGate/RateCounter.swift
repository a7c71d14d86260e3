import UnifiedCache

/// A domain's request budget: at most `limit` requests in any window of `window` (the tightest of its windows when
/// it has several). The gate asks it right before a request is sent. A protocol so that a fleet-wide counter (one
/// shared store for every instance) can replace the local one.
///
/// With a user share below 100 % (CONTRACT §15.2), the requests of one user (`user`, nil for work no user is
/// charged for) spend at most that share of each window, counted in the same step as the budget.
public protocol UpstreamRateCounter: Sendable {
    var limit: Int { get }
    var window: Duration { get }
    /// Spends one request at `now`, charged to `user`, if the budget and the user's share allow it. Background work
    /// leaves the last tenth of each window's budget to foreground requests.
    func take(at now: Duration, background: Bool, user: String?) async -> RateDecision
    /// What `take` would decide at `now`, spending nothing.
    func check(at now: Duration, background: Bool, user: String?) async -> RateDecision
    /// Requests the budget would still allow at `now` without spending any (the fewest over its windows).
    func remaining(at now: Duration) async -> Int
}

public enum RateDecision: Sendable, Equatable {
    case granted
    /// Over the budget; `retryAfter`: until the budget allows a request of that kind again.
    case refused(retryAfter: Duration)
    /// The budget has room, but the user has spent their share of it; `retryAfter`: until the share allows them one.
    case userShareSpent(retryAfter: Duration)

    /// The refusal as the gate gives it; nil when granted.
    var refusal: UpstreamRefusal? {
        switch self {
        case .granted: return nil
        case .refused(let retryAfter): return UpstreamRefusal(.rate, retryAfter: retryAfter)
        case .userShareSpent(let retryAfter): return UpstreamRefusal(.user, retryAfter: retryAfter)
        }
    }
}

extension UpstreamRateCounter {
    /// Requests kept from background work: a tenth of the budget, rounded up.
    public var backgroundReserve: Int { Self.backgroundReserve(of: limit) }

    /// A tenth of `limit`, rounded up.
    public static func backgroundReserve(of limit: Int) -> Int { (limit + 9) / 10 }
}

/// One user's share of a budget or of a cap (CONTRACT §15.2): `percent` of it, rounded down, at least one.
public struct UserShare: Sendable, Equatable {
    /// 1–100; 100 charges nobody (one user may spend everything, as without a share).
    public var percent: Int

    public init(percent: Int) {
        self.percent = min(100, max(1, percent))
    }

    /// Every user may spend everything: no per-user counting at all.
    public static let whole = UserShare(percent: 100)

    /// The most one user may take of `total`; nil when that is all of it (nothing to count per user).
    public func of(_ total: Int) -> Int? {
        let share = max(1, total * percent / 100)
        return share < total ? share : nil
    }
}
