import Foundation
import TestSupport
import Testing
@testable import UnifiedCache
@testable import UpstreamGate

/// The manager behind a gated fetcher (CONTRACT §7.1): a stampede spends one request of the budget, a refusal
/// serves a stored copy with its reason or fails with the refusal, and a refused fetch is not counted as one.
@Suite(.timeLimit(.minutes(10))) struct GatedManagerTests {
    static func gate(budget: Int, clock: ManualClock) -> UpstreamGate {
        UpstreamGate(
            configuration: .init(slotWait: .seconds(5)),
            budget: SlidingWindowCounter(limit: budget, window: .seconds(10)), clock: clock, jitter: { 0 })
    }

    @Test func aStampedeOfOneKeySpendsOneRequestOfTheBudget() async throws {
        let cache = makeManager()
        let held = HeldFetcher(body: "shared")
        let gate = Self.gate(budget: 5, clock: ManualClock())
        let fetcher = GatedFetcher(held, gate: gate)
        try await withThrowingTaskGroup(of: CacheResult.self) { group in
            for _ in 0..<200 {
                group.addTask { try await cache.get(request("cold"), policy: .ttl(.seconds(60)), fetcher: fetcher) }
            }
            await held.waitForStarts(1)
            await waitForWaiters(cache, key: "cold", count: 199)
            held.open()
            for try await result in group { #expect(text(result.entry) == "shared") }
        }
        #expect(await gate.snapshot().budgetRemaining == 4)
    }

    @Test func aRefusalServesTheStoredCopyWithItsReasonOrFailsWithIt() async throws {
        let wall = ManualWallClock(instant("2026-06-01T12:00:00Z"))
        let cache = makeManager(clock: wall)
        let gate = Self.gate(budget: 1, clock: ManualClock())
        let fetcher = GatedFetcher(ScriptedFetcher(body: "v1"), gate: gate)
        var policy = FreshnessPolicy.ttl(.seconds(60))
        policy.staleIfError = .seconds(3600)
        _ = try await cache.get(request("k"), policy: policy, fetcher: fetcher)
        wall.advance(by: 61)
        let stale = try await cache.get(request("k"), policy: policy, fetcher: fetcher)
        #expect(stale.outcome == .stale(reason: .upstreamRefused(.rate)) && text(stale.entry) == "v1")
        await #expect(throws: CacheError.refused(UpstreamRefusal(.rate, retryAfter: .seconds(10)))) {
            try await cache.get(request("other"), policy: policy, fetcher: fetcher)
        }
        let stats = cache.statistics()
        #expect(stats.upstream.fetches == 1 && stats.upstream.failures == 0)
        // The refused request was answered neither from the cache nor by an upstream: counted in none.
        #expect(stats.requests.stale == 1 && stats.requests.misses == 1)
        #expect(stats.namespaces["test"]?.misses == 1)
    }

    @Test func refreshAheadIsBackgroundWorkAtTheGate() async throws {
        let clock = ManualWallClock(instant("2026-03-02T09:00:00Z"))  // Monday 10:00 CET
        let cache = makeManager(clock: clock)
        let rule = RefreshAheadRule(timeZone: zone("Europe/Berlin"), weekday: 2)
        let policy = FreshnessPolicy.ttl(.seconds(30 * 86400)).refreshingAhead(rule)
        let key = request("health:avg:alice:2")
        let fetcher = ScriptedFetcher { request, _ in FetchedValue(body: Array("background=\(request.background)".utf8)) }
        _ = try await cache.get(key, policy: policy, fetcher: fetcher)
        clock.set(instant("2026-03-09T07:00:00Z"))  // next Monday 08:00 CET: refreshed ahead
        let stale = try await cache.get(key, policy: policy, fetcher: fetcher)
        #expect(stale.outcome == .stale(reason: .backgroundRefresh) && text(stale.entry) == "background=false")
        await cache.waitForPendingLoads()
        #expect(text(try await cache.get(key, policy: policy, fetcher: fetcher).entry) == "background=true")
    }

    /// An open circuit answers at once (CONTRACT §7.3): a stale memory copy is answered synchronously, as the load
    /// would after the refusal (STALE with its reason, counted as stale and as a circuit refusal), without a fetch
    /// or a task; the request that is the probe is never taken there, nor one with nothing stale in memory.
    @Test func anOpenCircuitAnswersAStaleMemoryCopySynchronously() async throws {
        let wall = ManualWallClock(instant("2026-06-01T12:00:00Z"))
        let cache = makeManager(clock: wall)
        let gateClock = ManualClock()
        let gate = UpstreamGate(configuration: .init(slotWait: .seconds(5)), budget: nil, clock: gateClock, jitter: { 0 })
        let failing = ScriptedFetcher(error: .unavailable("down"))
        var policy = FreshnessPolicy.ttl(.seconds(60))
        policy.staleIfError = .seconds(3600)
        let refusal: (String) -> UpstreamRefusal? = { _ in gate.refusesAtOnce() }
        _ = try await cache.get(request("k"), policy: policy, fetcher: GatedFetcher(ScriptedFetcher(body: "v1"), gate: gate))
        wall.advance(by: 61)
        // Closed: the stale copy is the load's business (it may fetch).
        #expect(cache.ready("k", policy: policy, refusal: refusal) == nil)
        for _ in 0..<5 { _ = try? await cache.get(request("k"), policy: policy, fetcher: GatedFetcher(failing, gate: gate)) }
        #expect(await gate.snapshot().circuit == .open)

        let stale = try #require(cache.ready("k", policy: policy, refusal: refusal))
        #expect(stale.outcome == .stale(reason: .upstreamRefused(.circuit)) && text(stale.entry) == "v1")
        #expect(cache.ready("cold", policy: policy, refusal: refusal) == nil)
        #expect(cache.ready("k", policy: policy) == nil)
        #expect(await gate.snapshot().rejected[.circuit] == 1)
        // After the back-off the next request is the probe: left to the load.
        gateClock.advance(by: .seconds(1))
        #expect(cache.ready("k", policy: policy, refusal: refusal) == nil)
        #expect(cache.statistics().requests.stale == 6)
    }
}
