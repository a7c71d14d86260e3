import Breaker
import Redis
import Testing
import UpstreamGate

/// The one circuit breaker, in both of its configurations: an upstream's (CONTRACT §7.3: five failures, 1 s
/// doubling to 30 s, stretched by up to a fifth) and Redis's (§6.5: three failures, 100 ms doubling to 5 s).
@Suite(.timeLimit(.minutes(1))) struct CircuitBreakerTests {
    static func failing(_ breaker: inout CircuitBreaker, times: Int, at now: Duration) {
        for _ in 0..<times { breaker.failed(at: now, probe: false) }
    }

    @Test func theThresholdOfConsecutiveFailuresOpensIt() {
        var breaker = CircuitBreaker(.upstream)
        Self.failing(&breaker, times: 4, at: .zero)
        #expect(breaker.admit(at: .zero) == .pass)
        breaker.succeeded()  // an answer breaks the run
        Self.failing(&breaker, times: 4, at: .zero)
        #expect(breaker.state(at: .zero) == .closed)
        #expect(breaker.isClosed)
        Self.failing(&breaker, times: 1, at: .zero)
        #expect(breaker.state(at: .zero) == .open)
        #expect(!breaker.isClosed)
        #expect(breaker.admit(at: .milliseconds(400)) == .refused(retryAfter: .milliseconds(600)))

        var redis = CircuitBreaker(.redis)
        Self.failing(&redis, times: 2, at: .zero)
        #expect(redis.admit(at: .zero) == .pass)
        Self.failing(&redis, times: 1, at: .milliseconds(2))
        #expect(redis.admit(at: .milliseconds(50)) == .refused(retryAfter: .milliseconds(52)))
        #expect(redis.admit(at: .milliseconds(101)) == .refused(retryAfter: .milliseconds(1)))
    }

    @Test func openThenOneProbeThenClosed() {
        var breaker = CircuitBreaker(.upstream)
        Self.failing(&breaker, times: 5, at: .zero)
        #expect(breaker.state(at: .seconds(1)) == .halfOpen)
        #expect(breaker.admit(at: .seconds(1)) == .probe)
        // While the probe is out, nobody else goes, however long it takes.
        #expect(breaker.admit(at: .seconds(1)) == .refused(retryAfter: .seconds(1)))
        #expect(breaker.admit(at: .seconds(100)) == .refused(retryAfter: .seconds(1)))
        #expect(breaker.state(at: .seconds(1)) == .halfOpen)
        breaker.succeeded()
        #expect(breaker.state(at: .seconds(1)) == .closed)
        #expect(breaker.admit(at: .seconds(1)) == .pass)
        #expect(breaker.admit(at: .seconds(1)) == .pass)
        // The next opening starts from the initial back-off again.
        Self.failing(&breaker, times: 5, at: .seconds(2))
        #expect(breaker.admit(at: .seconds(2)) == .refused(retryAfter: .seconds(1)))
    }

    /// Only the probe's failure counts while open: the other failures are of requests sent before it opened.
    /// Any success closes it: the dependency answered.
    @Test func whileOpenOnlyTheProbeFailureCountsAndAnySuccessCloses() {
        var breaker = CircuitBreaker(.redis)
        Self.failing(&breaker, times: 3, at: .zero)
        #expect(breaker.admit(at: .milliseconds(100)) == .probe)
        breaker.failed(at: .milliseconds(101), probe: false)
        #expect(breaker.state(at: .milliseconds(101)) == .halfOpen)
        breaker.succeeded()
        #expect(breaker.state(at: .milliseconds(101)) == .closed)
    }

    @Test func aFailedProbeDoublesTheBackOffUpToItsMaximum() {
        for (configuration, expected) in [
            (CircuitBreaker.Configuration.upstream, [1, 2, 4, 8, 16, 30, 30].map { Duration.seconds($0) }),
            (.redis, [100, 200, 400, 800, 1600, 3200, 5000, 5000].map { Duration.milliseconds($0) }),
        ] {
            var breaker = CircuitBreaker(configuration)
            Self.failing(&breaker, times: configuration.threshold, at: .zero)
            var now = Duration.zero
            var backoffs: [Duration] = []
            for _ in expected {
                guard case .refused(let wait) = breaker.admit(at: now) else {
                    Issue.record("not open")
                    return
                }
                backoffs.append(wait)
                now += wait
                #expect(breaker.admit(at: now) == .probe)
                breaker.failed(at: now, probe: true)
            }
            #expect(backoffs == expected)
        }
    }

    @Test func jitterStretchesTheBackOffByAtMostItsFraction() {
        var breaker = CircuitBreaker(.upstream)
        for _ in 0..<5 { breaker.failed(at: .zero, probe: false, random: 0.999) }
        guard case .refused(let wait) = breaker.admit(at: .zero) else {
            Issue.record("not open")
            return
        }
        #expect(wait > .seconds(1.19) && wait < .seconds(1.2))
        var redis = CircuitBreaker(.redis)
        for _ in 0..<3 { redis.failed(at: .zero, probe: false, random: 0.999) }
        #expect(redis.admit(at: .zero) == .refused(retryAfter: .milliseconds(100)))
    }

    @Test func anAbandonedProbeLetsTheNextRequestProbe() {
        var breaker = CircuitBreaker(.upstream)
        Self.failing(&breaker, times: 5, at: .zero)
        #expect(breaker.admit(at: .seconds(2)) == .probe)
        breaker.probeAbandoned()
        #expect(breaker.admit(at: .seconds(2)) == .probe)
    }

    @Test func theConfigurationIsClamped() {
        let clamped = CircuitBreaker.Configuration(threshold: 0, initialBackoff: .zero, maximumBackoff: .zero, jitter: 7)
        #expect(clamped.threshold == 1)
        #expect(clamped.initialBackoff == .milliseconds(1))
        #expect(clamped.maximumBackoff == .milliseconds(1))
        #expect(clamped.jitter == 1)
    }
}
