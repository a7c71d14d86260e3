import Foundation
import TestSupport
import Testing
@testable import UnifiedCache

/// `--refresh-interval` (CONTRACT §15.1): a forced refresh of a copy fetched less than the interval ago is a hit of
/// that copy (counted as a hit, marked), from whichever tier holds it; later refreshes, copies no longer fresh and
/// an interval of zero fetch as before.
@Suite(.timeLimit(.minutes(10))) struct RefreshIntervalTests {
    /// A cache with a refresh interval, on a manual clock, whose fetcher answers `v1`, `v2`, … (or `fetcher`'s).
    struct Fixture {
        let clock = ManualWallClock(instant("2026-06-01T12:00:00Z"))
        let cache: UnifiedCacheManager
        let fetcher: ScriptedFetcher
        let policy: FreshnessPolicy

        init(
            interval: Duration = .seconds(30), ttl: Duration = .seconds(300), secondTier: (any SecondTier)? = nil,
            maxEntries: Int = 1000, fetcher: ScriptedFetcher = ScriptedFetcher { _, n in FetchedValue(body: Array("v\(n)".utf8)) }
        ) {
            cache = UnifiedCacheManager(
                configuration: MemoryTierConfiguration(maxBytes: 1 << 20, maxEntries: maxEntries), secondTier: secondTier,
                clock: clock, ticker: ManualClock(), logger: quietLogger(), refreshInterval: interval)
            self.fetcher = fetcher
            var policy = FreshnessPolicy.ttl(ttl)
            policy.negativeTTL = .seconds(60)
            self.policy = policy
        }

        func get(_ key: String = "k", _ control: RequestControl = .normal) async throws -> CacheResult {
            try await cache.get(request(key), policy: policy, fetcher: fetcher, control: control)
        }
    }

    @Test func aRefreshWithinTheIntervalIsAHitOfTheStoredCopy() async throws {
        let fixture = Fixture()
        _ = try await fixture.get()
        fixture.clock.advance(by: 29)
        let throttled = try await fixture.get("k", .refresh)
        #expect(throttled.outcome == .hit && throttled.refreshThrottled && throttled.tier == .memory)
        #expect(text(throttled.entry) == "v1" && throttled.ageSeconds == 29)
        #expect(fixture.fetcher.count == 1)
        fixture.clock.advance(by: 1)
        let later = try await fixture.get("k", .refresh)
        #expect(later.outcome == .refresh && !later.refreshThrottled && text(later.entry) == "v2")
        // The interval counts from the last fetch: the refresh just made throttles the next.
        let again = try await fixture.get("k", .refresh)
        #expect(again.refreshThrottled && text(again.entry) == "v2")
        let stats = fixture.cache.statistics()
        #expect(stats.requests.hits == 2 && stats.requests.misses == 1 && stats.requests.refreshes == 1)
        #expect(stats.hitsByTier.memory == 2 && stats.upstream.fetches == 2)
    }

    @Test func anIntervalOfZeroNeverThrottles() async throws {
        let fixture = Fixture(interval: .zero)
        _ = try await fixture.get()
        let refreshed = try await fixture.get("k", .refresh)
        #expect(refreshed.outcome == .refresh && fixture.fetcher.count == 2)
    }

    /// A copy whose freshness ended (a short TTL) is no hit to serve: the refresh fetches.
    @Test func aCopyNoLongerFreshIsRefreshed() async throws {
        let fixture = Fixture(ttl: .seconds(10))
        _ = try await fixture.get()
        fixture.clock.advance(by: 11)
        let refreshed = try await fixture.get("k", .refresh)
        #expect(refreshed.outcome == .refresh && fixture.fetcher.count == 2)
    }

    @Test func aCopyOnTheSecondTierThrottlesToo() async throws {
        // One entry in memory: the second key's fetch evicts the first from memory, the disk keeps it.
        let fixture = Fixture(secondTier: DictionarySecondTier(), maxEntries: 1)
        _ = try await fixture.get("k")
        _ = try await fixture.get("other")
        await fixture.cache.flush()
        let throttled = try await fixture.get("k", .refresh)
        #expect(throttled.refreshThrottled && throttled.tier == .disk && fixture.fetcher.count == 2)
        #expect(text(throttled.entry) == "v1")
    }

    /// A remembered 404 fetched within the interval answers 404 again, counted as the hit it is.
    @Test func aRememberedNotFoundWithinTheIntervalIsAHit() async throws {
        let fixture = Fixture(fetcher: ScriptedFetcher(error: .notFound))
        await #expect(throws: CacheError.notFound(.miss, tier: nil, stored: true)) { try await fixture.get() }
        await #expect(throws: CacheError.notFound(.hit, tier: .memory, stored: false)) {
            try await fixture.get("k", .refresh)
        }
        #expect(fixture.fetcher.count == 1 && fixture.cache.statistics().requests.hits == 1)
    }
}
