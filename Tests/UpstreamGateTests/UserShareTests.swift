import TestSupport
import Testing
import UnifiedCache
@testable import UpstreamGate

/// One user's share of a domain's budget and of its cap (CONTRACT §15.2), on a clock moved by hand: past their
/// share a user is refused (`user`) or waits for one of their own fetches, while other users go ahead; the budget
/// spent by everyone is still the budget's refusal; background work is charged to nobody; a share of 100 % is the
/// gate of §7 alone.
@Suite(.timeLimit(.minutes(10))) struct UserShareTests {
    static func gate(
        limit: Int? = nil, concurrency: Int = 64, share: Int, slotWait: Duration = .seconds(5), clock: ManualClock
    ) -> UpstreamGate {
        var configuration = UpstreamGate.Configuration(concurrency: concurrency, slotWait: slotWait)
        configuration.userShare = UserShare(percent: share)
        let budget = limit.map {
            SlidingWindowCounter(limit: $0, window: .seconds(60), userShare: UserShare(percent: share))
        }
        return UpstreamGate(configuration: configuration, budget: budget, clock: clock, jitter: { 0 })
    }

    /// Admits and finishes one fetch of `user`; the refusal, or nil when it was let through.
    static func refusal(_ gate: UpstreamGate, user: String?, background: Bool = false) async -> UpstreamRefusal? {
        do {
            gate.finish(try await gate.admit(background: background, user: user), .answered)
            return nil
        } catch {
            guard case .refused(let refusal) = error else { return nil }
            return refusal
        }
    }

    @Test func oneUserSpendsAtMostTheirShareOfEachWindowAndOthersGoAhead() async throws {
        let clock = ManualClock()
        let gate = Self.gate(limit: 20, share: 10, clock: clock)
        #expect(await Self.refusal(gate, user: "mallory") == nil)
        clock.advance(by: .seconds(10))
        #expect(await Self.refusal(gate, user: "mallory") == nil)
        clock.advance(by: .seconds(10))
        // 10 % of 20 is 2: the third waits until the first grant leaves the window (40 s from now).
        #expect(await Self.refusal(gate, user: "mallory") == UpstreamRefusal(.user, retryAfter: .seconds(40)))
        for user in ["alice", "bob", "carol"] { #expect(await Self.refusal(gate, user: user) == nil) }
        #expect(await gate.snapshot().budgetRemaining == 15)
        clock.advance(by: .seconds(40))
        #expect(await Self.refusal(gate, user: "mallory") == nil)
        #expect(await gate.snapshot().rejected == [.user: 1])
    }

    /// Strava's shape: a share of each window; the longer one binds too.
    @Test func theShareHoldsInEveryWindow() {
        let counter = SlidingWindowCounter(
            windows: [RateWindow(limit: 20, window: .seconds(60)), RateWindow(limit: 30, window: .seconds(3600))],
            userShare: UserShare(percent: 10))
        // 10 % of 20 a minute is 2; 10 % of 30 an hour is 3.
        #expect(counter.take(at: .zero, background: false, user: "m") == .granted)
        #expect(counter.take(at: .zero, background: false, user: "m") == .granted)
        #expect(counter.take(at: .zero, background: false, user: "m") == .userShareSpent(retryAfter: .seconds(60)))
        let now = Duration.seconds(60)
        #expect(counter.take(at: now, background: false, user: "m") == .granted)
        // The minute has room again, the hour has not: the first minute's grants must leave it first.
        #expect(counter.take(at: now, background: false, user: "m") == .userShareSpent(retryAfter: .seconds(3540)))
        #expect(counter.take(at: now, background: false, user: "other") == .granted)
    }

    @Test func aBudgetEveryoneSpentIsTheBudgetsRefusalForEveryone() async throws {
        let clock = ManualClock()
        let gate = Self.gate(limit: 4, share: 50, clock: clock)
        for user in ["a", "a", "b", "b"] { #expect(await Self.refusal(gate, user: user) == nil) }
        #expect(await Self.refusal(gate, user: "c") == UpstreamRefusal(.rate, retryAfter: .seconds(60)))
        #expect(await Self.refusal(gate, user: "a") == UpstreamRefusal(.rate, retryAfter: .seconds(60)))
        #expect(await gate.snapshot().rejected == [.rate: 2])
    }

    @Test func backgroundWorkIsChargedToNoUser() async throws {
        let clock = ManualClock()
        let gate = Self.gate(limit: 20, share: 10, clock: clock)
        for _ in 0..<5 { #expect(await Self.refusal(gate, user: "mallory", background: true) == nil) }
        #expect(await Self.refusal(gate, user: "mallory") == nil)
        #expect(await Self.refusal(gate, user: "mallory") == nil)
        #expect(await Self.refusal(gate, user: "mallory")?.reason == .user)
        // A fetch the manager marks as background, through the fetcher: the request's user is not charged.
        var warm = FetchRequest(key: "k", namespace: "n", user: "mallory", path: "/k")
        warm.background = true
        _ = try await GatedFetcher(Answering(), gate: gate).fetch(warm)
        #expect(await gate.snapshot().budgetRemaining == 20 - 8)
    }

    @Test func aShareOf100IsTheBudgetAndTheCapAlone() async throws {
        let clock = ManualClock()
        let gate = Self.gate(limit: 5, concurrency: 3, share: 100, clock: clock)
        let held = [try await gate.admit(user: "solo"), try await gate.admit(user: "solo"), try await gate.admit(user: "solo")]
        #expect(await gate.snapshot().inFlight == 3)
        for pass in held { gate.finish(pass, .answered) }
        #expect(await Self.refusal(gate, user: "solo") == nil)
        #expect(await Self.refusal(gate, user: "solo") == nil)
        #expect(await Self.refusal(gate, user: "solo") == UpstreamRefusal(.rate, retryAfter: .seconds(60)))
    }

    /// 10 % of a cap of 20 is 2 in flight per user: mallory's third waits for one of her own, bob's go ahead.
    @Test func aUsersFurtherFetchesWaitForOneOfTheirOwnWhileOthersGoAhead() async throws {
        let clock = ManualClock()
        let gate = Self.gate(concurrency: 20, share: 10, clock: clock)
        let first = try await gate.admit(user: "mallory")
        let second = try await gate.admit(user: "mallory")
        let third = Task { try await gate.admit(user: "mallory") }
        await waitUntil("mallory's third waits") { clock.sleepers == 1 }
        let bob = [try await gate.admit(user: "bob"), try await gate.admit(user: "bob")]
        #expect(await gate.snapshot().inFlight == 4)
        gate.finish(first, .answered)
        let thirdPass = try await third.value
        #expect(await gate.snapshot().inFlight == 4)
        for pass in bob + [second, thirdPass] { gate.finish(pass, .answered) }
        #expect(await gate.snapshot().inFlight == 0)
    }

    /// A user's waiting fetch holds no slot of the cap, and its wait ends at the request's deadline.
    @Test func aWaitForOneOfOnesOwnSlotsEndsAtTheDeadlineAndHoldsNoSlot() async throws {
        let clock = ManualClock()
        let gate = Self.gate(concurrency: 4, share: 50, slotWait: .seconds(5), clock: clock)
        let mallory = [try await gate.admit(user: "mallory"), try await gate.admit(user: "mallory")]
        let waiting = Task { () async throws(FetchError) -> UpstreamGate.Pass in try await gate.admit(user: "mallory") }
        await waitUntil("mallory's third waits") { clock.sleepers == 1 }
        let bob = [try await gate.admit(user: "bob"), try await gate.admit(user: "bob")]
        #expect(await gate.snapshot().inFlight == 4)
        clock.advance(by: .seconds(5))
        await #expect(throws: FetchError.timeout) { try await waiting.value }
        for pass in mallory + bob { gate.finish(pass, .answered) }
        #expect(await gate.snapshot().inFlight == 0)
        // Mallory's slots were all given back: two more pass at once.
        let again = [try await gate.admit(user: "mallory"), try await gate.admit(user: "mallory")]
        for pass in again { gate.finish(pass, .answered) }
    }

    /// A cancelled wait for one of one's own slots leaves nothing held.
    @Test func aCancelledWaitForAUsersSlotLeavesNothingHeld() async throws {
        let clock = ManualClock()
        let gate = Self.gate(concurrency: 2, share: 50, clock: clock)
        let holder = try await gate.admit(user: "mallory")
        let waiter = Task { () async throws(FetchError) -> UpstreamGate.Pass in try await gate.admit(user: "mallory") }
        await waitUntil("the waiter parks") { clock.sleepers == 1 }
        waiter.cancel()
        await #expect(throws: FetchError.timeout) { try await waiter.value }
        gate.finish(holder, .answered)
        #expect(await gate.snapshot().inFlight == 0)
        gate.finish(try await gate.admit(user: "mallory"), .answered)
    }

    /// A user's log goes once its grants have left the longest window: memory follows the active users only.
    @Test func usersWhoseGrantsLeftTheWindowAreForgotten() {
        let counter = SlidingWindowCounter(limit: 100, window: .seconds(60), userShare: UserShare(percent: 10))
        for user in 0..<50 { #expect(counter.take(at: .seconds(1), background: false, user: "u\(user)") == .granted) }
        #expect(counter.usersKept == 50)
        #expect(counter.take(at: .seconds(62), background: false, user: "late") == .granted)
        #expect(counter.usersKept == 1)
    }

    @Test(arguments: [(10, 20, 2), (10, 5, 1), (10, 200, 20), (25, 7, 1), (100, 20, nil), (50, 1, nil)])
    func aShareIsThePercentRoundedDownAtLeastOne(percent: Int, total: Int, share: Int?) {
        #expect(UserShare(percent: percent).of(total) == share)
    }
}

/// A fetcher that answers at once.
private struct Answering: Fetcher {
    func fetch(_ request: FetchRequest) async throws(FetchError) -> FetchedValue { FetchedValue(body: []) }
}
