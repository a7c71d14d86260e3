/// Circuit breaker for Redis.
///
/// `failureThreshold` consecutive failures open it for a back-off that starts at `initialBackoff`;
/// once the back-off has passed, one probe is let through (half-open) while everything else is
/// still rejected. The probe's success closes the breaker; its failure re-opens it with the
/// back-off doubled, up to `maxBackoff`.
///
/// A pure value with an explicit `now` on every method, so it is tested without sleeping.
/// Only the probe's outcome counts while the breaker is open or half-open: outcomes of commands
/// admitted before it opened are ignored then.
public struct RedisBreaker: Sendable, Equatable {
    public struct Configuration: Sendable, Equatable {
        public var failureThreshold: Int
        public var initialBackoff: Duration
        public var maxBackoff: Duration

        /// Values are clamped to sane ranges: threshold ≥ 1, back-offs ≥ 1 ms, max ≥ initial.
        public init(
            failureThreshold: Int = 3,
            initialBackoff: Duration = .milliseconds(100),
            maxBackoff: Duration = .seconds(5)
        ) {
            self.failureThreshold = failureThreshold
            self.initialBackoff = initialBackoff
            self.maxBackoff = maxBackoff
        }

        var clamped: Configuration {
            let initial = max(initialBackoff, .milliseconds(1))
            return Configuration(
                failureThreshold: max(failureThreshold, 1),
                initialBackoff: initial,
                maxBackoff: max(maxBackoff, initial))
        }
    }

    public enum State: Sendable, Equatable {
        /// Commands pass; `failures` consecutive failures so far.
        case closed(failures: Int)
        /// Commands are rejected until `until`; then one probe is admitted.
        case open(until: ContinuousClock.Instant, backoff: Duration)
        /// The probe is in flight; everything else is rejected until its outcome is recorded.
        case halfOpen(backoff: Duration)
    }

    public enum Admission: Sendable, Equatable {
        /// Run it (breaker closed).
        case admitted
        /// Run it as the single half-open probe; record its outcome with `probe: true`.
        case probe
        /// Do not run it: the breaker is open, or a probe is in flight.
        case rejected
    }

    public let configuration: Configuration
    public private(set) var state: State = .closed(failures: 0)

    public init(configuration: Configuration = .init()) {
        self.configuration = configuration.clamped
    }

    /// Whether commands pass freely (closed). False while open or half-open.
    public var isClosed: Bool {
        if case .closed = state { return true }
        return false
    }

    /// When the next probe will be admitted, while open.
    public var reopensAt: ContinuousClock.Instant? {
        if case .open(let until, _) = state { return until }
        return nil
    }

    /// Asks to run a command at `now`.
    public mutating func admit(now: ContinuousClock.Instant) -> Admission {
        switch state {
        case .closed:
            return .admitted
        case .open(let until, let backoff):
            guard now >= until else { return .rejected }
            state = .halfOpen(backoff: backoff)
            return .probe
        case .halfOpen:
            return .rejected
        }
    }

    /// Records the outcome of an admitted command; `probe` tells whether it was admitted as `.probe`.
    public mutating func record(success: Bool, probe: Bool = false, now: ContinuousClock.Instant) {
        switch state {
        case .closed(let failures):
            if success {
                state = .closed(failures: 0)
            } else if failures + 1 >= configuration.failureThreshold {
                state = .open(until: now + configuration.initialBackoff, backoff: configuration.initialBackoff)
            } else {
                state = .closed(failures: failures + 1)
            }
        case .halfOpen(let backoff) where probe:
            if success {
                state = .closed(failures: 0)
            } else {
                let doubled = min(backoff * 2, configuration.maxBackoff)
                state = .open(until: now + doubled, backoff: doubled)
            }
        case .open, .halfOpen:
            // A command admitted before the breaker opened: its outcome says nothing new.
            break
        }
    }
}
