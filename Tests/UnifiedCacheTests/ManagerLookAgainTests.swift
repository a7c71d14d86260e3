import ClocksTesting
import Foundation
import TestSupport
import Testing
@testable import UnifiedCache

/// `lookAgain`: a memory hit answered as a result rendered before (the router's shortcut), counted as `look` counts
/// one, only while memory holds the very value the result was read from, as old and as fresh to the second; anything
/// else is false with nothing counted, and `look` decides.
struct ManagerLookAgainTests {
    let policy = FreshnessPolicy.ttl(.seconds(60))
    let clock = ManualWallClock(instant("2026-06-01T12:00:10Z"))

    @Test func theSameMemoryHitIsCountedAsLookCountsIt() throws {
        let cache = makeManager(clock: clock)
        cache.memory.insert(entry("k", ttl: 600))
        let result = try #require(cache.ready("k", policy: policy))
        #expect(result.tier == .memory && result.ageSeconds == 10)
        let before = cache.statistics()
        #expect(cache.lookAgain(result, policy: policy, now: clock.now()))
        let after = cache.statistics()
        #expect(after.requests.hits == before.requests.hits + 1 && after.requests.requests == before.requests.requests + 1)
        #expect(after.hitsByTier.memory == before.hitsByTier.memory + 1)
        #expect(after.namespaces["test"]?.hits == (before.namespaces["test"]?.hits ?? 0) + 1)
    }

    @Test func aSecondLaterTheAgeIsAnotherAnswer() throws {
        let cache = makeManager(clock: clock)
        cache.memory.insert(entry("k", ttl: 600))
        let result = try #require(cache.ready("k", policy: policy))
        clock.advance(by: 1)
        expectNothingCounted(cache) { #expect(!cache.lookAgain(result, policy: policy, now: clock.now())) }
        let renewed = try #require(cache.ready("k", policy: policy))
        #expect(cache.lookAgain(renewed, policy: policy, now: clock.now()))
    }

    @Test func anotherValueOfTheKeyOrNoneIsNotTheSameHit() throws {
        let cache = makeManager(clock: clock)
        cache.memory.insert(entry("k", body: "old", ttl: 600))
        let result = try #require(cache.ready("k", policy: policy))
        // The same time stored and expiry, another body: another etag.
        cache.memory.insert(entry("k", body: "new", ttl: 600))
        expectNothingCounted(cache) { #expect(!cache.lookAgain(result, policy: policy, now: clock.now())) }
        // The same body stored again later.
        cache.memory.insert(entry("k", body: "old", storedAt: instant("2026-06-01T12:00:05Z"), ttl: 595))
        expectNothingCounted(cache) { #expect(!cache.lookAgain(result, policy: policy, now: clock.now())) }
        cache.memory.insert(entry("k", body: "old", ttl: 600))
        #expect(cache.lookAgain(result, policy: policy, now: clock.now()))
        _ = cache.memory.remove("k")
        expectNothingCounted(cache) { #expect(!cache.lookAgain(result, policy: policy, now: clock.now())) }
        // Another key's value, the same in every field but its key, is not the result's key's.
        cache.memory.insert(entry("other", body: "old", ttl: 600))
        expectNothingCounted(cache) { #expect(!cache.lookAgain(result, policy: policy, now: clock.now())) }
    }

    /// The result keeps where memory held its entry, and looks there first: the key gone and stored again elsewhere
    /// with the same value is the same hit; its slot taken by another key's is not the result's key's.
    @Test func theSameValueStoredElsewhereIsTheSameHit() throws {
        let cache = makeManager(clock: clock)
        cache.memory.insert(entry("k", body: "v", ttl: 600))
        let result = try #require(cache.ready("k", policy: policy))
        #expect(result.memoryPlace.handle != nil)
        _ = cache.memory.remove("k")
        cache.memory.insert(entry("other", body: "v", ttl: 600))
        expectNothingCounted(cache) { #expect(!cache.lookAgain(result, policy: policy, now: clock.now())) }
        cache.memory.insert(entry("k", body: "v", ttl: 600))
        #expect(cache.lookAgain(result, policy: policy, now: clock.now()))
    }

    @Test func aResultNotReadFromMemoryIsNotAnsweredAgain() throws {
        let disk = DictionarySecondTier([entry("k", ttl: 600)], readsNow: true)
        let cache = makeManager(clock: clock, secondTier: disk)
        let fromDisk = try #require(cache.ready("k", policy: policy))
        #expect(fromDisk.tier == .disk && cache.memory.peek("k") != nil)
        expectNothingCounted(cache) { #expect(!cache.lookAgain(fromDisk, policy: policy, now: clock.now())) }
        var fetched = fromDisk
        (fetched.tier, fetched.outcome, fetched.ageSeconds) = (nil, .miss, 0)
        expectNothingCounted(cache) { #expect(!cache.lookAgain(fetched, policy: policy, now: clock.now())) }
    }

    @Test func aStaleCopyIsNotAnsweredAgain() {
        let cache = makeManager(clock: clock)
        let stale = entry("k", ttl: 5, stale: 3600)
        cache.memory.insert(stale)
        let result = CacheResult(
            entry: stale, outcome: .hit, tier: .memory, ageSeconds: 10, remainingFreshSeconds: 0, stored: false)
        expectNothingCounted(cache) { #expect(!cache.lookAgain(result, policy: policy, now: clock.now())) }
    }

    /// Hits given again while the value is replaced under them, from several threads: each true counted once, as
    /// a hit; once the last value written is the one read, it is given again.
    @Test func concurrentHitsAndWritesCountEveryHitGivenOnce() async throws {
        let (cache, policy, clock) = (makeManager(clock: clock), policy, clock)
        cache.memory.insert(entry("k", body: "v", ttl: 600))
        let result = try #require(cache.ready("k", policy: policy))
        let before = cache.statistics().requests.hits
        let given = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<8 {
                group.addTask {
                    (0..<2_000).reduce(0) { count, _ in
                        count + (cache.lookAgain(result, policy: policy, now: clock.now()) ? 1 : 0)
                    }
                }
            }
            group.addTask {
                for index in 0...500 { cache.memory.insert(entry("k", body: index.isMultiple(of: 2) ? "v" : "w", ttl: 600)) }
                return 0
            }
            return await group.reduce(0, +)
        }
        #expect(cache.statistics().requests.hits == before + given)
        #expect(cache.lookAgain(result, policy: policy, now: clock.now()))
    }

    private func expectNothingCounted(_ cache: UnifiedCacheManager, _ body: () -> Void) {
        let before = cache.statistics().requests
        body()
        #expect(cache.statistics().requests == before)
    }
}
