import SeededRandom
import Testing
import UnifiedCache
@testable import UpstreamGate

/// The local budget is exact: no window of its length, wherever it starts, holds more than the limit.
@Suite(.timeLimit(.minutes(10))) struct SlidingWindowCounterTests {
    @Test func aBurstGetsTheLimitAndTheRestLearnWhenToComeBack() {
        let counter = SlidingWindowCounter(limit: 5, window: .seconds(10))
        let decisions = (0..<8).map { _ in counter.take(at: .seconds(3), background: false) }
        #expect(decisions.prefix(5).allSatisfy { $0 == .granted })
        #expect(decisions.dropFirst(5).allSatisfy { $0 == .refused(retryAfter: .seconds(10)) })
        #expect(counter.remaining(at: .seconds(3)) == 0)
    }

    @Test func theWindowSlidesOneGrantAtATime() {
        let counter = SlidingWindowCounter(limit: 3, window: .seconds(10))
        for second in [0, 4, 8] { #expect(counter.take(at: .seconds(second), background: false) == .granted) }
        #expect(counter.take(at: .seconds(9), background: false) == .refused(retryAfter: .seconds(1)))
        // At the window's edge the oldest grant leaves it: one more, not three.
        #expect(counter.take(at: .seconds(10), background: false) == .granted)
        #expect(counter.take(at: .seconds(10), background: false) == .refused(retryAfter: .seconds(4)))
        #expect(counter.remaining(at: .seconds(14)) == 1)
    }

    @Test func checkingSpendsNothing() {
        let counter = SlidingWindowCounter(limit: 1, window: .seconds(1))
        #expect(counter.check(at: .zero, background: false) == .granted)
        #expect(counter.check(at: .zero, background: false) == .granted)
        #expect(counter.take(at: .zero, background: false) == .granted)
        #expect(counter.check(at: .milliseconds(500), background: false) == .refused(retryAfter: .milliseconds(500)))
    }

    @Test func backgroundWorkLeavesTheLastTenthToRequests() {
        let counter = SlidingWindowCounter(limit: 20, window: .seconds(60))
        let background = (0..<20).map { _ in counter.take(at: .zero, background: true) }
        #expect(background.filter { $0 == .granted }.count == 18)
        #expect(counter.take(at: .zero, background: false) == .granted)
        #expect(counter.take(at: .zero, background: false) == .granted)
        #expect(counter.take(at: .zero, background: false) == .refused(retryAfter: .seconds(60)))
        // A budget of one is all last tenth.
        #expect(SlidingWindowCounter(limit: 1, window: .seconds(1)).take(at: .zero, background: true) != .granted)
    }

    /// Random bursts against the definition: every window [t, t + length) holds at most `limit` grants.
    @Test(arguments: [(1, 7), (5, 10), (17, 60)])
    func noWindowEverHoldsMoreThanTheLimit(limit: Int, windowSeconds: Int) {
        let window = Duration.seconds(windowSeconds)
        let counter = SlidingWindowCounter(limit: limit, window: window)
        var generator = SplitMix64(seed: UInt64(limit * 1000 + windowSeconds))
        var now = Duration.zero
        var granted: [Duration] = []
        for _ in 0..<5_000 {
            now += .milliseconds(Int(generator.next() % 700))
            if counter.take(at: now, background: generator.next() % 4 == 0) == .granted { granted.append(now) }
        }
        #expect(granted.count > limit)
        var first = 0
        for last in granted.indices {
            while granted[first] + window <= granted[last] { first += 1 }
            #expect(last - first + 1 <= limit)
        }
    }

    /// Strava's shape: a short window and a long one; a request needs both, and a refusal waits for the later.
    @Test func everyWindowMustAllowARequest() {
        let counter = SlidingWindowCounter(windows: [
            RateWindow(limit: 2, window: .seconds(10)), RateWindow(limit: 3, window: .seconds(60)),
        ])
        #expect(counter.take(at: .seconds(0), background: false) == .granted)
        #expect(counter.take(at: .seconds(1), background: false) == .granted)
        // The short window is full until the first grant leaves it.
        #expect(counter.take(at: .seconds(5), background: false) == .refused(retryAfter: .seconds(5)))
        #expect(counter.remaining(at: .seconds(5)) == 0)
        #expect(counter.take(at: .seconds(10), background: false) == .granted)
        // Now the long window is full (3 in 60 s) although the short one has room.
        #expect(counter.remaining(at: .seconds(12)) == 0)
        #expect(counter.take(at: .seconds(12), background: false) == .refused(retryAfter: .seconds(48)))
        #expect(counter.take(at: .seconds(60), background: false) == .granted)
        #expect(counter.limit == 2 && counter.window == .seconds(10))
    }

    /// Random bursts against two windows at once: neither ever holds more than its limit.
    @Test func noWindowOfEitherLengthHoldsMoreThanItsLimit() {
        let windows = [RateWindow(limit: 4, window: .seconds(5)), RateWindow(limit: 9, window: .seconds(30))]
        let counter = SlidingWindowCounter(windows: windows)
        var generator = SplitMix64(seed: 42)
        var now = Duration.zero
        var granted: [Duration] = []
        for _ in 0..<5_000 {
            now += .milliseconds(Int(generator.next() % 900))
            if counter.take(at: now, background: generator.next() % 4 == 0) == .granted { granted.append(now) }
        }
        #expect(granted.count > 9)
        for window in windows {
            var first = 0
            for last in granted.indices {
                while granted[first] + window.window <= granted[last] { first += 1 }
                #expect(last - first + 1 <= window.limit)
            }
        }
    }
}
