import UnifiedCache

/// A domain's circuit (CONTRACT §7.3): `threshold` consecutive failures open it; while open, requests are refused
/// for a back-off that starts at `initialBackoff` and doubles up to `maximumBackoff`, stretched by up to a fifth
/// at random so that instances do not probe in step; then one probe is let through, whose success closes it and
/// whose failure opens it again for the doubled back-off. A value: the gate keeps it under its lock.
public struct CircuitBreaker: Sendable, Equatable {
    public enum State: String, Sendable, Equatable {
        case closed
        case open
        case halfOpen = "half-open"
    }

    public enum Admission: Sendable, Equatable {
        case pass
        /// The one request let through after the back-off.
        case probe
        case refused(retryAfter: Duration)
    }

    public var threshold = 5
    public var initialBackoff: Duration = .seconds(1)
    public var maximumBackoff: Duration = .seconds(30)

    private var failures = 0
    /// When the open circuit lets a probe through; nil while closed.
    private var openUntil: Duration?
    private var backoff: Duration = .zero
    private var probing = false

    public init() {}

    public func state(at now: Duration) -> State {
        guard let openUntil else { return .closed }
        return probing || now >= openUntil ? .halfOpen : .open
    }

    public mutating func admit(at now: Duration) -> Admission {
        guard let openUntil else { return .pass }
        // While the probe is out, the others wait for its verdict: at least a back-off's first step.
        if probing { return .refused(retryAfter: initialBackoff) }
        if now < openUntil { return .refused(retryAfter: openUntil - now) }
        probing = true
        return .probe
    }

    /// The upstream answered (a 404 or a 429 is an answer too): the circuit closes.
    public mutating func succeeded() {
        failures = 0
        openUntil = nil
        backoff = .zero
        probing = false
    }

    /// A refused connection, a timeout or a 5xx. `jitter` in 0..<1 stretches the back-off by up to a fifth.
    public mutating func failed(at now: Duration, probe: Bool, jitter: Double) {
        if openUntil != nil {
            // Only the probe's failure counts while open: the others were sent before it opened.
            guard probe else { return }
            backoff = min(backoff * 2, maximumBackoff)
        } else {
            failures += 1
            guard failures >= threshold else { return }
            failures = 0
            backoff = initialBackoff
        }
        probing = false
        openUntil = now + backoff * (1 + 0.2 * min(max(jitter, 0), 1))
    }

    /// The probe never reached the upstream (refused by the budget, or its wait ended): the next request probes.
    public mutating func probeAbandoned() {
        probing = false
    }
}
