import Foundation
import TestSupport
import Testing
@testable import UnifiedCache
@testable import UpstreamGate

/// The manager behind a gate with a user share (CONTRACT §15.2): a coalesced load is charged once, to the user whose
/// request led it; past the share a stored copy is served with the reason, else the refusal is the user's.
@Suite(.timeLimit(.minutes(10))) struct UserShareManagerTests {
    /// 20 a minute, 10 % (2) per user.
    static func gate(clock: ManualClock = ManualClock()) -> UpstreamGate {
        var configuration = UpstreamGate.Configuration(slotWait: .seconds(5))
        configuration.userShare = UserShare(percent: 10)
        return UpstreamGate(
            configuration: configuration,
            budget: SlidingWindowCounter(limit: 20, window: .seconds(60), userShare: UserShare(percent: 10)),
            clock: clock, jitter: { 0 })
    }

    @Test func aCoalescedLoadIsChargedOnceToTheUserWhoLedIt() async throws {
        let cache = makeManager()
        let held = HeldFetcher(body: "v")
        let gate = Self.gate()
        let fetcher = GatedFetcher(held, gate: gate)
        try await withThrowingTaskGroup(of: CacheResult.self) { group in
            for _ in 0..<50 {
                group.addTask { try await cache.get(request("k"), policy: .ttl(.seconds(60)), fetcher: fetcher, control: .refresh) }
            }
            await held.waitForStarts(1)
            await waitForWaiters(cache, key: "k", count: 49)
            held.open()
            for try await result in group { #expect(text(result.entry) == "v") }
        }
        #expect(held.count == 1)
        // Alice spent one of her two: one more fetch, then her share is spent (and nobody else's).
        _ = try await cache.get(request("k2"), policy: .ttl(.seconds(60)), fetcher: fetcher)
        await #expect(throws: CacheError.refused(UpstreamRefusal(.user, retryAfter: .seconds(60)))) {
            try await cache.get(request("k3"), policy: .ttl(.seconds(60)), fetcher: fetcher)
        }
        _ = try await cache.get(request("b1", user: "bob"), policy: .ttl(.seconds(60)), fetcher: fetcher)
        #expect(await gate.snapshot().budgetRemaining == 17)
    }

    @Test func pastTheShareARefreshServesTheStoredCopyWithTheReason() async throws {
        let cache = makeManager()
        let fetcher = GatedFetcher(ScriptedFetcher { _, n in FetchedValue(body: Array("v\(n)".utf8)) }, gate: Self.gate())
        _ = try await cache.get(request("k"), policy: .ttl(.seconds(60)), fetcher: fetcher)
        _ = try await cache.get(request("k"), policy: .ttl(.seconds(60)), fetcher: fetcher, control: .refresh)
        let third = try await cache.get(request("k"), policy: .ttl(.seconds(60)), fetcher: fetcher, control: .refresh)
        #expect(third.outcome == .stale(reason: .upstreamRefused(.user)) && text(third.entry) == "v2")
        let stats = cache.statistics()
        #expect(stats.requests.misses == 1 && stats.requests.refreshes == 1 && stats.requests.stale == 1)
        #expect(stats.upstream.fetches == 2)
    }
}
