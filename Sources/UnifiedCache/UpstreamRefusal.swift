import Clocks

/// Why the gate kept a fetch from its upstream (CONTRACT §7): the budget is spent, a 429 paused the domain, or
/// its circuit is open. `retryAfter`: until the upstream may be asked again.
public struct UpstreamRefusal: Error, Sendable, Equatable {
    public enum Reason: String, Sendable, Equatable, CaseIterable {
        case rate
        case paused
        case circuit
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
