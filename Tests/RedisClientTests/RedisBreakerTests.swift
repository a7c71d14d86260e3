import RedisClient
import Testing

@Suite(.timeLimit(.minutes(10))) struct RedisBreakerTests {
    let start = ContinuousClock.now

    func at(_ milliseconds: Int) -> ContinuousClock.Instant {
        start.advanced(by: .milliseconds(milliseconds))
    }

    @Test func opensAfterTheThresholdOfConsecutiveFailures() {
        var breaker = RedisBreaker(configuration: .init(failureThreshold: 3))
        #expect(breaker.admit(now: at(0)) == .admitted)
        breaker.record(success: false, now: at(0))
        breaker.record(success: false, now: at(1))
        #expect(breaker.state == .closed(failures: 2))
        #expect(breaker.isClosed)
        breaker.record(success: false, now: at(2))
        #expect(breaker.state == .open(until: at(102), backoff: .milliseconds(100)))
        #expect(!breaker.isClosed)
        #expect(breaker.reopensAt == at(102))
        #expect(breaker.admit(now: at(50)) == .rejected)
        #expect(breaker.admit(now: at(101)) == .rejected)
    }

    @Test func aSuccessResetsTheCount() {
        var breaker = RedisBreaker(configuration: .init(failureThreshold: 2))
        breaker.record(success: false, now: at(0))
        breaker.record(success: true, now: at(1))
        breaker.record(success: false, now: at(2))
        #expect(breaker.state == .closed(failures: 1))
        #expect(breaker.admit(now: at(3)) == .admitted)
    }

    @Test func admitsOneProbeAtATimeAfterTheBackoff() {
        var breaker = RedisBreaker(configuration: .init(failureThreshold: 1))
        breaker.record(success: false, now: at(0))
        #expect(breaker.admit(now: at(100)) == .probe)
        #expect(breaker.state == .halfOpen(backoff: .milliseconds(100)))
        #expect(breaker.admit(now: at(100)) == .rejected)
        #expect(breaker.admit(now: at(10_000)) == .rejected)
        // Outcomes of commands admitted before the breaker opened do not decide anything.
        breaker.record(success: true, probe: false, now: at(101))
        breaker.record(success: false, probe: false, now: at(101))
        #expect(breaker.state == .halfOpen(backoff: .milliseconds(100)))
    }

    @Test func probeSuccessCloses() {
        var breaker = RedisBreaker(configuration: .init(failureThreshold: 1))
        breaker.record(success: false, now: at(0))
        #expect(breaker.admit(now: at(150)) == .probe)
        breaker.record(success: true, probe: true, now: at(151))
        #expect(breaker.state == .closed(failures: 0))
        #expect(breaker.admit(now: at(152)) == .admitted)
        #expect(breaker.admit(now: at(152)) == .admitted)
        // And the next opening starts from the initial back-off again.
        breaker.record(success: false, now: at(200))
        #expect(breaker.state == .open(until: at(300), backoff: .milliseconds(100)))
    }

    @Test func probeFailureDoublesTheBackoffUpToTheCap() {
        var breaker = RedisBreaker(configuration: .init(failureThreshold: 1))
        var now = 0
        breaker.record(success: false, now: at(now))
        var backoffs: [Int] = [100]
        for _ in 0..<8 {
            guard case .open(let until, _) = breaker.state else {
                Issue.record("not open: \(breaker.state)")
                return
            }
            #expect(breaker.admit(now: until.advanced(by: .milliseconds(-1))) == .rejected)
            #expect(breaker.admit(now: until) == .probe)
            now = Int(start.duration(to: until) / .milliseconds(1)) + 7
            breaker.record(success: false, probe: true, now: at(now))
            guard case .open(let next, let backoff) = breaker.state else {
                Issue.record("not open: \(breaker.state)")
                return
            }
            #expect(next == at(now).advanced(by: backoff))
            backoffs.append(Int(backoff / .milliseconds(1)))
        }
        #expect(backoffs == [100, 200, 400, 800, 1600, 3200, 5000, 5000, 5000])
    }

    @Test func configurationIsClamped() {
        let breaker = RedisBreaker(
            configuration: .init(failureThreshold: 0, initialBackoff: .zero, maxBackoff: .zero))
        #expect(breaker.configuration.failureThreshold == 1)
        #expect(breaker.configuration.initialBackoff == .milliseconds(1))
        #expect(breaker.configuration.maxBackoff == .milliseconds(1))
        let defaults = RedisBreaker.Configuration()
        #expect(defaults.failureThreshold == 3)
        #expect(defaults.initialBackoff == .milliseconds(100))
        #expect(defaults.maxBackoff == .seconds(5))
    }
}
