/// One circuit breaker for every dependency that fails in bursts (each upstream, Redis), configured per use:
/// `threshold` consecutive failures open it; while open, requests are refused for a back-off that starts at
/// `initialBackoff` and doubles up to `maximumBackoff`, stretched by up to `jitter` of itself at random so that
/// instances do not probe in step; then one probe is let through, whose success closes it and whose failure
/// opens it again for the doubled back-off. While it is open only the probe's failure counts (other requests were
/// sent before it opened); any success closes it, since the dependency answered.
///
/// A value with the time passed in (a `Duration` since any fixed origin), so it is tested without sleeping; its
/// owner keeps it under a lock.
public struct CircuitBreaker: Sendable, Equatable {
    public struct Configuration: Sendable, Equatable {
        public var threshold: Int
        public var initialBackoff: Duration
        public var maximumBackoff: Duration
        /// The largest stretch of a back-off, as a fraction of it (0: none).
        public var jitter: Double

        /// Clamped to sane ranges: threshold ≥ 1, back-offs ≥ 1 ms, maximum ≥ initial, jitter in 0…1.
        public init(threshold: Int, initialBackoff: Duration, maximumBackoff: Duration, jitter: Double = 0) {
            self.threshold = max(threshold, 1)
            self.initialBackoff = max(initialBackoff, .milliseconds(1))
            self.maximumBackoff = max(maximumBackoff, self.initialBackoff)
            self.jitter = min(max(jitter, 0), 1)
        }
    }

    public enum State: String, Sendable, Equatable {
        case closed
        case open
        case halfOpen = "half-open"
    }

    public enum Admission: Sendable, Equatable {
        case pass
        /// The one request let through after the back-off; report its outcome with `probe: true`.
        case probe
        case refused(retryAfter: Duration)
    }

    public let configuration: Configuration
    private var failures = 0
    /// When the open circuit lets a probe through; nil while closed.
    private var openUntil: Duration?
    private var backoff: Duration = .zero
    private var probing = false

    public init(_ configuration: Configuration) {
        self.configuration = configuration
    }

    public func state(at now: Duration) -> State {
        guard let openUntil else { return .closed }
        return probing || now >= openUntil ? .halfOpen : .open
    }

    /// Whether requests pass freely: false while open or half-open.
    public var isClosed: Bool { openUntil == nil }

    public mutating func admit(at now: Duration) -> Admission {
        guard openUntil != nil else { return .pass }
        if let retryAfter = refusal(at: now) { return .refused(retryAfter: retryAfter) }
        probing = true
        return .probe
    }

    /// What `admit` would refuse at `now` (its retry-after), without admitting anything: nil when a request would
    /// pass or be the probe.
    public func refusal(at now: Duration) -> Duration? {
        guard let openUntil else { return nil }
        // While the probe is out, the others wait for its verdict: at least a back-off's first step.
        if probing { return configuration.initialBackoff }
        return now < openUntil ? openUntil - now : nil
    }

    /// The dependency answered: the circuit closes.
    public mutating func succeeded() {
        failures = 0
        openUntil = nil
        backoff = .zero
        probing = false
    }

    /// A failure (a refused connection, a timeout, a 5xx, a broken Redis connection). `random` in 0..<1 picks the
    /// stretch of the back-off within `jitter`.
    public mutating func failed(at now: Duration, probe: Bool, random: Double = 0) {
        if openUntil != nil {
            guard probe else { return }
            backoff = min(backoff * 2, configuration.maximumBackoff)
        } else {
            failures += 1
            guard failures >= configuration.threshold else { return }
            failures = 0
            backoff = configuration.initialBackoff
        }
        probing = false
        openUntil = now + backoff * (1 + configuration.jitter * min(max(random, 0), 1))
    }

    /// The probe never reached the dependency (refused by something else first): the next request probes.
    public mutating func probeAbandoned() {
        probing = false
    }
}
