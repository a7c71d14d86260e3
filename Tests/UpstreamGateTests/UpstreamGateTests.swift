import NIOConcurrencyHelpers
import TestSupport
import Testing
import UnifiedCache
@testable import UpstreamGate

/// The gate's rules on a clock moved by hand (CONTRACT §7): refusals with their reason and wait, the 429 pause
/// in both of `Retry-After`'s meanings, the breaker through the gate, the cap on requests in flight with its
/// deadline, and background work yielding.
@Suite(.timeLimit(.minutes(10))) struct UpstreamGateTests {
    static func gate(
        concurrency: Int = 64, slotWait: Duration = .seconds(5), budget: (any UpstreamRateCounter)? = nil,
        clock: ManualClock
    ) -> UpstreamGate {
        UpstreamGate(
            configuration: .init(concurrency: concurrency, slotWait: slotWait), budget: budget, clock: clock,
            jitter: { 0 })
    }

    static func refusal(_ gate: UpstreamGate, background: Bool = false) async -> UpstreamRefusal? {
        do {
            let pass = try await gate.admit(background: background)
            gate.finish(pass, .answered)
            return nil
        } catch {
            guard case .refused(let refusal) = error else { return nil }
            return refusal
        }
    }

    /// Waits (bounded) until `count` tasks sleep on the clock: waiters parked for a slot.
    static func parked(_ count: Int, on clock: ManualClock) async {
        await waitUntil("\(count) waiters park") { clock.sleepers >= count }
    }

    @Test(arguments: [(3 as Int?, 3), (nil, 60), (7200, 3600), (0, 0)])
    func a429PausesTheDomain(retryAfter: Int?, pausedSeconds: Int) async throws {
        let clock = ManualClock()
        let gate = Self.gate(clock: clock)
        gate.finish(try await gate.admit(), .rateLimited(retryAfter: retryAfter))
        if pausedSeconds > 0 {
            #expect(await Self.refusal(gate) == UpstreamRefusal(.paused, retryAfter: .seconds(pausedSeconds)))
            clock.advance(by: .seconds(pausedSeconds) - .milliseconds(1))
            #expect(await Self.refusal(gate)?.reason == .paused)
            clock.advance(by: .milliseconds(1))
        }
        #expect(await Self.refusal(gate) == nil)
        #expect(await gate.snapshot().rejected[.paused, default: 0] == (pausedSeconds > 0 ? 2 : 0))
    }

    @Test func theBudgetRefusesWithTheTimeUntilItAllowsARequest() async throws {
        let clock = ManualClock()
        let gate = Self.gate(budget: SlidingWindowCounter(limit: 2, window: .seconds(10)), clock: clock)
        #expect(await Self.refusal(gate) == nil)
        clock.advance(by: .seconds(4))
        #expect(await Self.refusal(gate) == nil)
        #expect(await Self.refusal(gate) == UpstreamRefusal(.rate, retryAfter: .seconds(6)))
        #expect(await gate.snapshot().budgetRemaining == 0)
        clock.advance(by: .seconds(6))
        #expect(await gate.snapshot().budgetRemaining == 1)
        #expect(await Self.refusal(gate) == nil)
        #expect(await gate.snapshot().rejected == [.rate: 1])
    }

    @Test func theCircuitOpensAfterFiveFailuresAndOneProbeClosesIt() async throws {
        let clock = ManualClock()
        let gate = Self.gate(clock: clock)
        for _ in 0..<5 { gate.finish(try await gate.admit(), .failed) }
        #expect(await Self.refusal(gate) == UpstreamRefusal(.circuit, retryAfter: .seconds(1)))
        #expect(await gate.snapshot().circuit == .open)
        clock.advance(by: .seconds(1))
        let probe = try await gate.admit()
        #expect(await Self.refusal(gate)?.reason == .circuit)
        #expect(await gate.snapshot().circuit == .halfOpen)
        gate.finish(probe, .failed)
        #expect(await Self.refusal(gate) == UpstreamRefusal(.circuit, retryAfter: .seconds(2)))
        clock.advance(by: .seconds(2))
        gate.finish(try await gate.admit(), .answered)
        #expect(await gate.snapshot().circuit == .closed)
        #expect(await Self.refusal(gate) == nil)
        #expect(await gate.snapshot().rejected == [.circuit: 3])
    }

    @Test func aProbeRefusedByTheBudgetLeavesTheProbeToTheNextRequest() async throws {
        let clock = ManualClock()
        let gate = Self.gate(budget: SlidingWindowCounter(limit: 5, window: .seconds(60)), clock: clock)
        for _ in 0..<5 { gate.finish(try await gate.admit(), .failed) }
        clock.advance(by: .seconds(1))
        #expect(await Self.refusal(gate)?.reason == .rate)
        clock.advance(by: .seconds(60))
        #expect(await Self.refusal(gate) == nil)  // the probe, answered: closed
        #expect(await gate.snapshot().circuit == .closed)
    }

    /// A request the HTTP client refused to send (`FetchError.invalidRequest`) never reached the upstream: through a
    /// gated fetcher, any number of them leave the circuit closed (and its consecutive failures where they were),
    /// free their slots, and an unsent probe leaves the probe to the next request.
    @Test func requestsThatNeverLeftTheProcessCountNothingTowardTheCircuit() async throws {
        struct Refusing: Fetcher {
            let failing: Bool
            func fetch(_ request: FetchRequest) async throws(FetchError) -> FetchedValue {
                throw failing ? .unavailable("upstream status 503") : .invalidRequest("the HTTP client refused a header")
            }
        }
        let clock = ManualClock()
        let gate = Self.gate(concurrency: 1, clock: clock)
        let request = FetchRequest(key: "k", namespace: "subscription", user: "u", path: "/users/u/subscription")
        for _ in 0..<4 { await #expect(throws: FetchError.self) { try await GatedFetcher(Refusing(failing: true), gate: gate).fetch(request) } }
        for _ in 0..<20 {
            await #expect(throws: FetchError.invalidRequest("the HTTP client refused a header")) {
                try await GatedFetcher(Refusing(failing: false), gate: gate).fetch(request)
            }
        }
        #expect(await gate.snapshot().circuit == .closed)
        #expect(await gate.snapshot().inFlight == 0)
        // The upstream's own fifth failure in a row opens it: the refused ones neither counted nor reset the count.
        gate.finish(try await gate.admit(), .failed)
        #expect(await gate.snapshot().circuit == .open)
        clock.advance(by: .seconds(1))
        gate.finish(try await gate.admit(), .notSent)
        #expect(await gate.snapshot().circuit == .halfOpen)
        gate.finish(try await gate.admit(), .answered)  // the next request probes
        #expect(await gate.snapshot().circuit == .closed)
    }

    @Test func requestsOverTheCapWaitForASlotUntilTheirDeadline() async throws {
        let clock = ManualClock()
        let gate = Self.gate(concurrency: 2, slotWait: .seconds(5), clock: clock)
        let first = try await gate.admit()
        let second = try await gate.admit()
        #expect(await gate.snapshot().inFlight == 2)
        let third = Task { try await gate.admit() }
        await Self.parked(1, on: clock)
        gate.finish(first, .answered)
        let thirdPass = try await third.value
        #expect(await gate.snapshot().inFlight == 2)

        let fourth = Task { () async throws(FetchError) -> UpstreamGate.Pass in try await gate.admit() }
        await Self.parked(1, on: clock)
        clock.advance(by: .seconds(5))
        await #expect(throws: FetchError.timeout) { try await fourth.value }
        gate.finish(second, .answered)
        gate.finish(thirdPass, .answered)
        #expect(await gate.snapshot().inFlight == 0)
    }

    @Test func backgroundWorkYieldsTheNextSlotToARequest() async throws {
        let clock = ManualClock()
        let gate = Self.gate(concurrency: 1, clock: clock)
        let holder = try await gate.admit()
        let order = OrderLog()
        let background = Task {
            let pass = try await gate.admit(background: true)
            order.append("background")
            gate.finish(pass, .answered)
        }
        await Self.parked(1, on: clock)
        let foreground = Task {
            let pass = try await gate.admit()
            order.append("foreground")
            gate.finish(pass, .answered)
        }
        await Self.parked(2, on: clock)
        gate.finish(holder, .answered)
        try await background.value
        try await foreground.value
        #expect(order.entries == ["foreground", "background"])
    }

    @Test func aCancelledWaiterLeavesWithoutASlot() async throws {
        let clock = ManualClock()
        let gate = Self.gate(concurrency: 1, clock: clock)
        let holder = try await gate.admit()
        let waiter = Task { () async throws(FetchError) -> UpstreamGate.Pass in try await gate.admit() }
        await Self.parked(1, on: clock)
        waiter.cancel()
        await #expect(throws: FetchError.timeout) { try await waiter.value }
        gate.finish(holder, .answered)
        #expect(await gate.snapshot().inFlight == 0)
        gate.finish(try await gate.admit(), .answered)
    }
}

/// Records the order in which tasks got somewhere.
final class OrderLog: Sendable {
    private let log = NIOLockedValueBox<[String]>([])
    func append(_ entry: String) { log.withLockedValue { $0.append(entry) } }
    var entries: [String] { log.withLockedValue { $0 } }
}
