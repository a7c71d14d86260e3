import Clocks

/// Why the gate kept a fetch from its upstream (CONTRACT §7, §15): the budget is spent, a 429 paused the domain, its
/// circuit is open, or the user whose request it is has spent their share of the budget. `retryAfter`: until the
/// upstream may be asked again (for that user, with `user`).
public struct UpstreamRefusal: Error, Sendable, Equatable {
    public enum Reason: String, Sendable, Equatable, CaseIterable {
        case rate
        case paused
        case circuit
        /// The user's share of the budget (`--upstream-user-share`) is spent; others' requests still go ahead.
        case user
    }

    public var reason: Reason
    public var retryAfter: Duration

    public init(_ reason: Reason, retryAfter: Duration) {
        self.reason = reason
        self.retryAfter = retryAfter
    }

    /// Whole seconds, rounded up: the `Retry-After` of an answer.
    public var retryAfterSeconds: Int { max(0, Int(retryAfter.wholeSecondsRoundedUp)) }
}
