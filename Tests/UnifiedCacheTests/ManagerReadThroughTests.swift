import Foundation
import Testing
import TestSupport
@testable import UnifiedCache

@Suite(.timeLimit(.minutes(10))) struct ManagerReadThroughTests {
    @Test func missThenHitThenExpiry() async throws {
        let clock = ManualWallClock(instant("2026-06-01T12:00:00Z"))
        let cache = makeManager(clock: clock)
        let fetcher = ScriptedFetcher { _, n in FetchedValue(body: bytes("v\(n)")) }
        let policy = FreshnessPolicy.ttl(.seconds(60))

        let first = try await cache.get(request("k"), policy: policy, fetcher: fetcher)
        #expect(first.outcome == .miss && first.tier == nil && first.stored && first.ageSeconds == 0)
        #expect(first.remainingFreshSeconds == 60 && first.entry.etag == ETag.make(for: bytes("v1")))
        clock.advance(by: 30)
        let second = try await cache.get(request("k"), policy: policy, fetcher: fetcher)
        #expect(second.outcome == .hit && second.tier == .memory && text(second.entry) == "v1")
        #expect(second.ageSeconds == 30 && second.remainingFreshSeconds == 30)
        clock.advance(by: 30)
        let third = try await cache.get(request("k"), policy: policy, fetcher: fetcher)
        #expect(third.outcome == .miss && text(third.entry) == "v2")
        #expect(fetcher.count == 2)
        let stats = cache.statistics()
        #expect(stats.requests.hits == 1 && stats.requests.misses == 2 && stats.upstream.fetches == 2)
        #expect(stats.namespaces["test"]?.requests == 3)
    }

    @Test func aLookRecordsOnlyFreshHits() async throws {
        let clock = ManualWallClock(instant("2026-06-01T12:00:00Z"))
        let cache = makeManager(clock: clock)
        let policy = FreshnessPolicy.ttl(.seconds(60))
        #expect(cache.ready("k", policy: policy) == nil)
        _ = try await cache.get(request("k"), policy: policy, fetcher: ScriptedFetcher(body: "v"))
        let hit = try #require(cache.ready("k", policy: policy))
        #expect(hit.outcome == .hit && hit.tier == .memory && text(hit.entry) == "v")
        clock.advance(by: 61)
        #expect(cache.ready("k", policy: policy) == nil)
        let stats = cache.statistics().requests
        #expect(stats.hits == 1 && stats.misses == 1 && stats.requests == 2)
    }

    @Test func noStoreIsServedNotStored() async throws {
        let cache = makeManager()
        let fetcher = ScriptedFetcher(body: "private", storable: false)
        let first = try await cache.get(request("k"), policy: .ttl(.seconds(60)), fetcher: fetcher)
        #expect(first.outcome == .miss && !first.stored && text(first.entry) == "private")
        let second = try await cache.get(request("k"), policy: .ttl(.seconds(60)), fetcher: fetcher)
        #expect(second.outcome == .miss && fetcher.count == 2)
        #expect(cache.statistics().memory.entries == 0)
    }

    /// A refresh the upstream answers `no-store` is served and not stored, and the copy stored before goes: the next
    /// read fetches again rather than answer the older copy after the newer one.
    @Test(arguments: [RequestControl.refresh, .normal])
    func aNoStoreAnswerRemovesTheCopyStoredBefore(control: RequestControl) async throws {
        let clock = ManualWallClock(instant("2026-06-01T12:00:00Z"))
        let cache = makeManager(clock: clock)
        let fetcher = ScriptedFetcher { _, n in FetchedValue(body: bytes("v\(n)"), storable: n != 2) }
        let policy = FreshnessPolicy.ttl(.seconds(60))
        _ = try await cache.get(request("k"), policy: policy, fetcher: fetcher)
        // A plain read fetches once the copy is stale; a forced refresh at once.
        if control == .normal { clock.advance(by: 61) }
        let newer = try await cache.get(request("k"), policy: policy, fetcher: fetcher, control: control)
        #expect(newer.outcome == (control == .refresh ? .refresh : .miss) && !newer.stored && text(newer.entry) == "v2")
        #expect(cache.ready("k", policy: policy) == nil)
        #expect(cache.statistics().memory.entries == 0)
        let next = try await cache.get(request("k"), policy: policy, fetcher: fetcher)
        #expect(next.outcome == .miss && text(next.entry) == "v3" && fetcher.count == 3)
    }

    @Test func notFoundIsRememberedForTheNegativeTTL() async throws {
        let clock = ManualWallClock(instant("2026-06-01T12:00:00Z"))
        let cache = makeManager(clock: clock)
        let fetcher = ScriptedFetcher(error: .notFound)
        // Each 404 says how it was had (X-Cache on the answer): fetched and remembered, then a hit from memory.
        let fetched = CacheError.notFound(.miss, tier: nil, stored: true)
        await #expect(throws: fetched) {
            try await cache.get(request("k"), policy: .ttl(.seconds(600)), fetcher: fetcher)
        }
        await #expect(throws: CacheError.notFound(.hit, tier: .memory, stored: false)) {
            try await cache.get(request("k"), policy: .ttl(.seconds(600)), fetcher: fetcher)
        }
        #expect(fetcher.count == 1)
        #expect(cache.ready("k", policy: .ttl(.seconds(600))) == nil)
        clock.advance(by: 60)
        await #expect(throws: fetched) {
            try await cache.get(request("k"), policy: .ttl(.seconds(600)), fetcher: fetcher)
        }
        #expect(fetcher.count == 2)
        let stats = cache.statistics()
        // A remembered 404 counts as a hit; a 404 is an answer, not a fetch failure.
        #expect(stats.requests.misses == 2 && stats.requests.hits == 1 && stats.upstream.failures == 0)
    }

    @Test(arguments: [FetchError.timeout, .unavailable("502"), .rateLimited(retryAfter: 7)])
    func staleIfErrorWithinTheWindow(error: FetchError) async throws {
        let clock = ManualWallClock(instant("2026-06-01T12:00:00Z"))
        let cache = makeManager(clock: clock)
        let fetcher = ScriptedFetcher { _, n throws(FetchError) in
            if n == 1 { return FetchedValue(body: bytes("v1")) }
            throw error
        }
        var policy = FreshnessPolicy.ttl(.seconds(60))
        policy.staleIfError = .seconds(3600)
        _ = try await cache.get(request("k"), policy: policy, fetcher: fetcher)
        clock.advance(by: 60 + 3599)
        let stale = try await cache.get(request("k"), policy: policy, fetcher: fetcher)
        #expect(stale.outcome == .stale(reason: .upstreamError) && text(stale.entry) == "v1")
        #expect(stale.tier == .memory && stale.remainingFreshSeconds == 0 && stale.ageSeconds == 3659)
        clock.advance(by: 1)
        let expected: CacheError =
            if case .rateLimited(let after) = error { .rateLimited(retryAfter: after) } else { .upstreamFailed(error) }
        await #expect(throws: expected) { try await cache.get(request("k"), policy: policy, fetcher: fetcher) }
        let stats = cache.statistics()
        #expect(stats.requests.misses == 2 && stats.requests.stale == 1)
        #expect(stats.upstream.fetches == 3 && stats.upstream.failures == 2)
    }

    @Test func failedFetchIsNeverStoredAndTheNextRequestRetries() async throws {
        let cache = makeManager()
        let fetcher = ScriptedFetcher { _, n throws(FetchError) in
            if n == 1 { throw .unavailable("503") }
            return FetchedValue(body: bytes("ok"))
        }
        await #expect(throws: CacheError.upstreamFailed(.unavailable("503"))) {
            try await cache.get(request("k"), policy: .ttl(.seconds(60)), fetcher: fetcher)
        }
        let result = try await cache.get(request("k"), policy: .ttl(.seconds(60)), fetcher: fetcher)
        #expect(result.outcome == .miss && text(result.entry) == "ok")
    }

    @Test func aValueItsExpiryNeverLetsBeServedIsNotServedStale() async throws {
        let cache = makeManager()
        let fetcher = ScriptedFetcher { _, n throws(FetchError) in
            if n == 1 { return FetchedValue(body: bytes("yesterday's")) }
            throw .timeout
        }
        // As health.today's rule decides a timestamp from another local day: never served, not even stale.
        let policy = FreshnessPolicy(lifetime: .expiry(FixedExpiry(fresh: 0, servable: 0)))
        let first = try await cache.get(request("health:today"), policy: policy, fetcher: fetcher)
        #expect(first.outcome == .miss && first.remainingFreshSeconds == 0)
        await #expect(throws: CacheError.upstreamFailed(.timeout)) {
            try await cache.get(request("health:today"), policy: policy, fetcher: fetcher)
        }
    }

    @Test func aValueStaleAtOnceIsServableOnError() async throws {
        let cache = makeManager()
        let fetcher = ScriptedFetcher { _, n throws(FetchError) in
            if n == 1 { return FetchedValue(body: bytes("no sample yet")) }
            throw .timeout
        }
        // As health.today's rule decides a null timestamp: stale at once, servable on error.
        let policy = FreshnessPolicy(lifetime: .expiry(FixedExpiry(fresh: 0)))
        _ = try await cache.get(request("t"), policy: policy, fetcher: fetcher)
        let second = try await cache.get(request("t"), policy: policy, fetcher: fetcher)
        #expect(second.outcome == .stale(reason: .upstreamError) && fetcher.count == 2)
    }

    @Test func forcedRefreshFetchesEvenWhenFresh() async throws {
        let cache = makeManager()
        let fetcher = ScriptedFetcher { _, n in FetchedValue(body: bytes("v\(n)")) }
        _ = try await cache.get(request("k"), policy: .ttl(.seconds(60)), fetcher: fetcher)
        let refreshed = try await cache.get(request("k"), policy: .ttl(.seconds(60)), fetcher: fetcher, control: .refresh)
        #expect(refreshed.outcome == .refresh && refreshed.stored && text(refreshed.entry) == "v2")
        let hit = try await cache.get(request("k"), policy: .ttl(.seconds(60)), fetcher: fetcher)
        #expect(hit.outcome == .hit && text(hit.entry) == "v2")
        #expect(cache.statistics().requests.refreshes == 1)
    }

    @Test func forcedRefreshThatFailsServesTheStoredCopyStale() async throws {
        let cache = makeManager()
        let fetcher = ScriptedFetcher { _, n throws(FetchError) in
            if n == 1 { return FetchedValue(body: bytes("v1")) }
            throw .unavailable("500")
        }
        _ = try await cache.get(request("k"), policy: .ttl(.seconds(60)), fetcher: fetcher)
        let result = try await cache.get(request("k"), policy: .ttl(.seconds(60)), fetcher: fetcher, control: .refresh)
        #expect(result.outcome == .stale(reason: .upstreamError) && text(result.entry) == "v1")
    }

    @Test func onlyIfCachedNeverFetches() async throws {
        let clock = ManualWallClock(instant("2026-06-01T12:00:00Z"))
        let cache = makeManager(clock: clock)
        let fetcher = ScriptedFetcher(body: "v")
        await #expect(throws: CacheError.notCached) {
            try await cache.get(request("k"), policy: .ttl(.seconds(60)), fetcher: fetcher, control: .onlyIfCached)
        }
        #expect(cache.statistics().requests.requests == 0)  // a 504 counts nowhere
        _ = try await cache.get(request("k"), policy: .ttl(.seconds(60)), fetcher: fetcher)
        let hit = try await cache.get(request("k"), policy: .ttl(.seconds(60)), fetcher: fetcher, control: .onlyIfCached)
        #expect(hit.outcome == .hit)
        clock.advance(by: 120)
        let stale = try await cache.get(request("k"), policy: .ttl(.seconds(60)), fetcher: fetcher, control: .onlyIfCached)
        #expect(stale.outcome == .stale(reason: .onlyIfCached))
        clock.advance(by: 24 * 3600)
        await #expect(throws: CacheError.notCached) {
            try await cache.get(request("k"), policy: .ttl(.seconds(60)), fetcher: fetcher, control: .onlyIfCached)
        }
        #expect(fetcher.count == 1)
    }

    @Test func refreshAheadServesStaleAndRefreshesOnceInTheBackground() async throws {
        let berlin = zone("Europe/Berlin")
        let clock = ManualWallClock(instant("2026-03-02T09:00:00Z"))  // Monday 10:00 CET
        let cache = makeManager(clock: clock)
        let policy = FreshnessPolicy.ttl(.seconds(30 * 86400)).refreshingAhead(RefreshAheadRule(timeZone: berlin, weekday: 2))
        let key = request("health:avg:alice:2")
        _ = try await cache.get(key, policy: policy, fetcher: ScriptedFetcher(body: "old"))

        clock.set(instant("2026-03-09T07:00:00Z"))  // next Monday 08:00 CET
        let refresher = HeldFetcher(body: "new")
        #expect(cache.ready(key.key, policy: policy) == nil)
        let first = try await cache.get(key, policy: policy, fetcher: refresher)
        #expect(first.outcome == .stale(reason: .backgroundRefresh) && text(first.entry) == "old")
        await refresher.waitForStarts(1)
        // The background refresh in flight is not joined by callback: the fresh copy answers at once (`get`).
        #expect(!cache.join(key, policy: policy) { _ in Issue.record("a request made to wait for a background refresh") })
        let second = try await cache.get(key, policy: policy, fetcher: refresher)
        #expect(second.outcome == .stale(reason: .backgroundRefresh) && text(second.entry) == "old")
        refresher.open()
        await cache.waitForPendingLoads()
        let third = try await cache.get(key, policy: policy, fetcher: refresher)
        #expect(third.outcome == .hit && text(third.entry) == "new")
        #expect(refresher.count == 1)
        let stats = cache.statistics()
        #expect(stats.requests.stale == 2 && stats.requests.hits == 1 && stats.requests.misses == 1)
        #expect(stats.upstream.fetches == 2)
    }

    @Test func refreshAheadOutsideTheWindowIsAPlainHit() async throws {
        let clock = ManualWallClock(instant("2026-03-02T09:00:00Z"))
        let cache = makeManager(clock: clock)
        let policy = FreshnessPolicy.ttl(.seconds(30 * 86400)).refreshingAhead(RefreshAheadRule(timeZone: zone("Europe/Berlin")))
        let fetcher = ScriptedFetcher(body: "v")
        _ = try await cache.get(request("a"), policy: policy, fetcher: fetcher)
        clock.set(instant("2026-03-09T09:00:00Z"))  // 10:00 CET
        #expect(try await cache.get(request("a"), policy: policy, fetcher: fetcher).outcome == .hit)
        #expect(cache.ready("a", policy: policy) != nil)
        #expect(fetcher.count == 1)
    }
}
