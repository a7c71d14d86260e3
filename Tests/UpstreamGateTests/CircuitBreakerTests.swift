import Testing
import UnifiedCache
@testable import UpstreamGate

/// CONTRACT §7.3: five consecutive failures open the circuit; the back-off starts at 1 s and doubles up to
/// 30 s, stretched by up to a fifth; one probe at its end decides.
struct CircuitBreakerTests {
    static func failing(_ breaker: inout CircuitBreaker, times: Int, at now: Duration) {
        for _ in 0..<times { breaker.failed(at: now, probe: false, jitter: 0) }
    }

    @Test func fiveConsecutiveFailuresOpenIt() {
        var breaker = CircuitBreaker()
        Self.failing(&breaker, times: 4, at: .zero)
        #expect(breaker.admit(at: .zero) == .pass)
        breaker.succeeded()  // an answer breaks the run
        Self.failing(&breaker, times: 4, at: .zero)
        #expect(breaker.state(at: .zero) == .closed)
        Self.failing(&breaker, times: 1, at: .zero)
        #expect(breaker.state(at: .zero) == .open)
        #expect(breaker.admit(at: .milliseconds(400)) == .refused(retryAfter: .milliseconds(600)))
    }

    @Test func openThenOneProbeThenClosed() {
        var breaker = CircuitBreaker()
        Self.failing(&breaker, times: 5, at: .zero)
        #expect(breaker.state(at: .seconds(1)) == .halfOpen)
        #expect(breaker.admit(at: .seconds(1)) == .probe)
        // While the probe is out, nobody else goes.
        #expect(breaker.admit(at: .seconds(1)) == .refused(retryAfter: .seconds(1)))
        breaker.succeeded()
        #expect(breaker.state(at: .seconds(1)) == .closed)
        #expect(breaker.admit(at: .seconds(1)) == .pass)
    }

    @Test func aFailedProbeDoublesTheBackOffUpToThirtySeconds() {
        var breaker = CircuitBreaker()
        Self.failing(&breaker, times: 5, at: .zero)
        var now = Duration.zero
        var backoffs: [Duration] = []
        for _ in 0..<7 {
            guard case .refused(let wait) = breaker.admit(at: now) else { Issue.record("not open"); return }
            backoffs.append(wait)
            now += wait
            #expect(breaker.admit(at: now) == .probe)
            breaker.failed(at: now, probe: true, jitter: 0)
        }
        #expect(backoffs == [1, 2, 4, 8, 16, 30, 30].map { Duration.seconds($0) })
        // Failures of requests sent before it opened do not move it.
        breaker.failed(at: now, probe: false, jitter: 0)
        #expect(breaker.admit(at: now) == .refused(retryAfter: .seconds(30)))
    }

    @Test func jitterStretchesTheBackOffByAtMostAFifth() {
        var breaker = CircuitBreaker()
        for _ in 0..<5 { breaker.failed(at: .zero, probe: false, jitter: 0.999) }
        guard case .refused(let wait) = breaker.admit(at: .zero) else { Issue.record("not open"); return }
        #expect(wait > .seconds(1.19) && wait < .seconds(1.2))
    }

    @Test func anAbandonedProbeLetsTheNextRequestProbe() {
        var breaker = CircuitBreaker()
        Self.failing(&breaker, times: 5, at: .zero)
        #expect(breaker.admit(at: .seconds(2)) == .probe)
        breaker.probeAbandoned()
        #expect(breaker.admit(at: .seconds(2)) == .probe)
    }
}
