import Breaker
import Clocks
import NIOConcurrencyHelpers
import UnifiedCache

/// What stands between the cache and one domain's upstream (CONTRACT §7): a 429 pause, a circuit breaker, a cap
/// on requests in flight and a request budget, asked in that order, so that refusals cost no waiting. The budget
/// is spent only once a slot is held, right before the request is sent: the upstream never sees more than the
/// budget in any window. With a user share (§15.2), one user's fetches spend at most that share of the budget and
/// hold at most that share of the slots (waiting for one of their own first). No HTTP here: fetchers report what
/// happened as an `UpstreamGate.Outcome`.
public final class UpstreamGate: Sendable {
    public struct Configuration: Sendable {
        /// At most this many requests in flight.
        public var concurrency: Int
        /// The longest a request waits for a slot (the request's deadline); then it fails as a timeout.
        public var slotWait: Duration
        /// A 429 without `Retry-After` pauses the domain this long; none pauses it longer than `maximumPause`.
        package var defaultPause: Duration = .seconds(60)
        package var maximumPause: Duration = .seconds(3600)
        public var breaker = CircuitBreaker(.upstream)
        /// `--upstream-user-share` (CONTRACT §15.2) of the cap; the budget's share is its counter's. `.whole` (the
        /// default here) counts nobody's fetches apart.
        public var userShare = UserShare.whole

        public init(concurrency: Int = 64, slotWait: Duration) {
            self.concurrency = concurrency
            self.slotWait = slotWait
        }
    }

    /// A request let through: it must be finished once, whatever happens.
    public struct Pass: Sendable {
        let probe: Bool
        /// The user one of whose slots it holds (nil: none).
        var user: String? = nil
    }

    /// What became of a request that was let through.
    public enum Outcome: Sendable, Equatable {
        /// The upstream answered (a 404 included).
        case answered
        /// The upstream said 429; whole seconds of its `Retry-After` when it sent one.
        case rateLimited(retryAfter: Int?)
        /// A refused connection, a timeout or a 5xx.
        case failed
        /// The request never left the process (the HTTP client refused it as built): the upstream was not asked, so
        /// its circuit learns nothing (an unsent probe lets the next request probe).
        case notSent
    }

    private struct State {
        var breaker: CircuitBreaker
        var pausedUntil: Duration = .zero
        var rejected: [UpstreamRefusal.Reason: Int] = [:]
        var refreshThrottled = 0
    }

    public let configuration: Configuration
    public let budget: (any UpstreamRateCounter)?
    private let clock: Elapsed
    private let jitter: @Sendable () -> Double
    private let slots: ConcurrencyLimiter
    /// Each user's share of `slots`; nil when a user may hold them all.
    private let userSlots: UserSlots?
    private let state: NIOLockedValueBox<State>

    /// `jitter`: a number in 0..<1 for each back-off (random unless a test fixes it).
    public init(
        configuration: Configuration, budget: (any UpstreamRateCounter)?, clock: any Clock<Duration>,
        jitter: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
    ) {
        self.configuration = configuration
        self.budget = budget
        self.clock = Elapsed(clock)
        self.jitter = jitter
        slots = ConcurrencyLimiter(limit: configuration.concurrency)
        userSlots = configuration.userShare.of(max(1, configuration.concurrency)).map(UserSlots.init(limit:))
        state = NIOLockedValueBox(State(breaker: configuration.breaker))
    }

    /// Lets a request through, or refuses it (`FetchError.refused`) or gives up waiting for a slot
    /// (`FetchError.timeout`). Background work yields to foreground requests and leaves them the last tenth of
    /// the budget. `user`: whose share the fetch spends (nil for work no user is charged for: background work).
    public func admit(background: Bool = false, user: String? = nil) async throws(FetchError) -> Pass {
        let now = clock.now()
        let user = background ? nil : user
        let probe = try admitPausedAndCircuit(at: now)
        if let budget, let refusal = await budget.check(at: now, background: background, user: user).refusal {
            throw refuse(refusal.reason, retryAfter: refusal.retryAfter, probe: probe)
        }
        let deadline = now + configuration.slotWait
        var pass = Pass(probe: probe)
        if let userSlots, let user {
            guard await userSlots.acquire(user, deadline: deadline, clock: clock) else { throw abandon(pass) }
            pass.user = user
        }
        guard await slots.acquire(background: background, deadline: deadline, clock: clock) else {
            if let user = pass.user { userSlots?.release(user) }
            throw abandon(pass)
        }
        if let budget, let refusal = await budget.take(at: clock.now(), background: background, user: user).refusal {
            release(pass)
            throw refuse(refusal.reason, retryAfter: refusal.retryAfter, probe: probe)
        }
        return pass
    }

    /// No slot within the deadline: the probe (if it was one) goes to the next request.
    private func abandon(_ pass: Pass) -> FetchError {
        if pass.probe { state.withLockedValue { $0.breaker.probeAbandoned() } }
        return .timeout
    }

    /// Frees the slots `pass` holds.
    private func release(_ pass: Pass) {
        slots.release()
        if let user = pass.user { userSlots?.release(user) }
    }

    /// A forced refresh answered from a recent copy instead (`--refresh-interval`, CONTRACT §15.1): counted for
    /// `/stats`.
    public func recordRefreshThrottled() {
        state.withLockedValue { $0.refreshThrottled += 1 }
    }

    /// Ends a request that was let through: frees its slot and learns from its outcome.
    public func finish(_ pass: Pass, _ outcome: Outcome) {
        release(pass)
        let now = clock.now()
        state.withLockedValue { state in
            switch outcome {
            case .answered:
                state.breaker.succeeded()
            case .rateLimited(let retryAfter):
                state.breaker.succeeded()
                state.pausedUntil = max(state.pausedUntil, now + pause(retryAfter: retryAfter))
            case .failed:
                state.breaker.failed(at: now, probe: pass.probe, random: jitter())
            case .notSent:
                if pass.probe { state.breaker.probeAbandoned() }
            }
        }
    }

    /// How long a 429 pauses the domain: its `Retry-After` seconds, `defaultPause` without one, at most
    /// `maximumPause` (CONTRACT §7.2).
    public func pause(retryAfter: Int?) -> Duration {
        min(retryAfter.map { .seconds(max(0, $0)) } ?? configuration.defaultPause, configuration.maximumPause)
    }

    public func snapshot() async -> UpstreamGateSnapshot {
        let now = clock.now()
        let (rejected, circuit, throttled) = state.withLockedValue {
            ($0.rejected, $0.breaker.state(at: now), $0.refreshThrottled)
        }
        var snapshot = UpstreamGateSnapshot(
            inFlight: slots.inFlight, budgetRemaining: await budget?.remaining(at: now), budgetLimit: budget?.limit,
            rejected: rejected, circuit: circuit)
        snapshot.refreshThrottled = throttled
        return snapshot
    }

    /// Whether a request would be refused at once (a 429 pause, an open circuit), counted as the refusal it is;
    /// nil when it would go on to the budget and the cap, or be the probe (which this never takes). For answering
    /// a stored copy without starting a fetch: the same answer as `admit`'s refusal, without its waiting.
    public func refusesAtOnce() -> UpstreamRefusal? {
        let now = clock.now()
        return state.withLockedValue { state in
            guard let refusal = Self.pausedOrOpen(state, at: now) else { return nil }
            state.rejected[refusal.reason, default: 0] += 1
            return refusal
        }
    }

    /// The refusals that need no waiting: a 429 pause, then the circuit. Returns whether this is the probe.
    private func admitPausedAndCircuit(at now: Duration) throws(FetchError) -> Bool {
        let verdict = state.withLockedValue { state -> Result<Bool, UpstreamRefusal> in
            if let refusal = Self.pausedOrOpen(state, at: now) {
                state.rejected[refusal.reason, default: 0] += 1
                return .failure(refusal)
            }
            return .success(state.breaker.admit(at: now) == .probe)
        }
        switch verdict {
        case .success(let probe): return probe
        case .failure(let refusal): throw .refused(refusal)
        }
    }

    private static func pausedOrOpen(_ state: State, at now: Duration) -> UpstreamRefusal? {
        if now < state.pausedUntil { return UpstreamRefusal(.paused, retryAfter: state.pausedUntil - now) }
        return state.breaker.refusal(at: now).map { UpstreamRefusal(.circuit, retryAfter: $0) }
    }

    private func refuse(_ reason: UpstreamRefusal.Reason, retryAfter: Duration, probe: Bool) -> FetchError {
        state.withLockedValue { state in
            state.rejected[reason, default: 0] += 1
            if probe { state.breaker.probeAbandoned() }
        }
        return .refused(UpstreamRefusal(reason, retryAfter: retryAfter))
    }
}

/// What `/stats` shows of a domain's gate.
public struct UpstreamGateSnapshot: Sendable, Equatable {
    public var inFlight: Int
    /// Nil without a budget.
    public var budgetRemaining: Int?
    /// The budget's limit (its tightest window's), nil without a budget.
    public var budgetLimit: Int? = nil
    public var rejected: [UpstreamRefusal.Reason: Int]
    public var circuit: CircuitBreaker.State
    /// Forced refreshes answered from a recent copy (`--refresh-interval`, CONTRACT §15.1).
    public var refreshThrottled = 0
}
