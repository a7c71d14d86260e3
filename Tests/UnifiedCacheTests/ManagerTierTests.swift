import Foundation
import Testing
import TestSupport
@testable import UnifiedCache

@Suite(.timeLimit(.minutes(10))) struct ManagerTierTests {
    @Test func memoryMissIsServedAndPromotedFromTheSecondTier() async throws {
        let disk = DictionarySecondTier([entry("k", body: "from-disk", ttl: 600)])
        let cache = makeManager(secondTier: disk)
        let fetcher = ScriptedFetcher(body: "fetched")
        let first = try await cache.get(request("k"), policy: .ttl(.seconds(60)), fetcher: fetcher)
        #expect(first.outcome == .hit && first.tier == .disk && text(first.entry) == "from-disk")
        let second = try #require(cache.ready("k", policy: .ttl(.seconds(60))))
        #expect(second.tier == .memory)
        #expect(fetcher.count == 0)
        await cache.flush()
        #expect(disk.stores == 0)  // promotion does not write back
    }

    @Test func staleDiskCopyIsServedWhenTheUpstreamFails() async throws {
        let disk = DictionarySecondTier([entry("k", body: "old", ttl: 10, stale: 3600)])
        let clock = ManualWallClock(instant("2026-06-01T12:01:00Z"))
        let cache = makeManager(clock: clock, secondTier: disk)
        let result = try await cache.get(request("k"), policy: .ttl(.seconds(60)), fetcher: ScriptedFetcher(error: .timeout))
        #expect(result.outcome == .stale(reason: .upstreamError) && result.tier == .disk && text(result.entry) == "old")
    }

    @Test func fetchedValuesAreWrittenThrough() async throws {
        let disk = DictionarySecondTier()
        let cache = makeManager(secondTier: disk)
        _ = try await cache.get(request("k"), policy: .ttl(.seconds(60)), fetcher: ScriptedFetcher(body: "v"))
        await cache.flush()
        #expect(disk.stored["k"].map(text) == "v")
    }

    @Test func rawPutPeekRemove() async throws {
        let clock = ManualWallClock(instant("2026-06-01T12:00:00Z"))
        let disk = DictionarySecondTier()
        let cache = makeManager(clock: clock, secondTier: disk)
        let (created, stored) = try await cache.put(key: "raw1", body: bytes("hello"), contentType: "text/plain", ttl: .seconds(60))
        #expect(created && stored.namespace == "raw" && stored.user == nil)
        #expect(disk.stored["raw1"] != nil)  // acknowledged only once written to the second tier
        let (createdAgain, _) = try await cache.put(key: "raw1", body: bytes("hello2"), ttl: .seconds(60))
        #expect(!createdAgain)
        #expect(await cache.peek("raw1").map(text) == "hello2")
        clock.advance(by: 60)
        #expect(await cache.peek("raw1") == nil)  // never served stale
        #expect(try await cache.remove("raw1"))
        #expect(try await !cache.remove("raw1"))
        #expect(disk.stored.isEmpty)
    }

    @Test func peekFallsBackToTheSecondTier() async {
        let disk = DictionarySecondTier([entry("d", body: "disk", ttl: 60)])
        let cache = makeManager(secondTier: disk)
        #expect(await cache.peek("d").map(text) == "disk")
        #expect(await cache.peek("missing") == nil)
    }

    @Test func invalidationsCountDistinctKeysAcrossTiers() async throws {
        let disk = DictionarySecondTier([
            entry("subscription:alice", namespace: "subscription"),
            entry("progress:today:alice:2026-06-01", namespace: "progress.today"),
            entry("progress:any:bob", namespace: "progress.any", user: "bob"),
        ])
        let cache = makeManager(secondTier: disk)
        let fetcher = ScriptedFetcher(body: "v")
        // Also in memory: one key in both tiers, one only in memory.
        let subscription = request("subscription:alice", namespace: "subscription")
        let streak = request("progress:streak:alice", namespace: "progress.streak")
        _ = try await cache.get(subscription, policy: .ttl(.seconds(60)), fetcher: fetcher)
        _ = try await cache.get(streak, policy: .ttl(.seconds(60)), fetcher: fetcher)
        await cache.flush()
        let removed = try await cache.invalidate(
            namespaces: ["subscription", "progress.today", "progress.streak", "progress.any"], user: "alice")
        #expect(removed == 3)
        #expect(disk.stored.keys.sorted() == ["progress:any:bob"])
        #expect(cache.statistics().memory.entries == 0)
        #expect(try await cache.erase(user: "bob") == 1)
        #expect(disk.stored.isEmpty)
    }

    @Test func prefixInvalidationListAndRemoveAll() async throws {
        let disk = DictionarySecondTier([entry("a:1"), entry("a:2"), entry("b:1")])
        let cache = makeManager(secondTier: disk)
        _ = try await cache.get(request("a:1"), policy: .ttl(.seconds(60)), fetcher: ScriptedFetcher(body: "v"))
        _ = try await cache.get(request("a:3"), policy: .ttl(.seconds(60)), fetcher: ScriptedFetcher(body: "v"))
        let listing = await cache.list(prefix: "a:", limit: 10)
        #expect(listing.map(\.key) == ["a:1", "a:2", "a:3"])
        #expect(listing.map(\.tier) == [.memory, .disk, .memory])
        #expect(await cache.list(prefix: "", limit: 2).count == 2)
        #expect(try await cache.invalidate(prefix: "a:") == 3)
        #expect(await cache.list(prefix: "a:").isEmpty)
        #expect(try await cache.removeAll() == 1)
        #expect(disk.stored.isEmpty)
    }

    @Test func statisticsIncludeSecondTierEvictions() async throws {
        let cache = makeManager(maxEntries: 1, secondTier: DictionarySecondTier())
        _ = try await cache.get(request("a"), policy: .ttl(.seconds(60)), fetcher: ScriptedFetcher(body: "v"))
        _ = try await cache.get(request("b"), policy: .ttl(.seconds(60)), fetcher: ScriptedFetcher(body: "v"))
        let stats = cache.statistics()
        #expect(stats.memory.evictions == 1 && stats.secondTier?.evictions == 2 && stats.evictions == 3)
        #expect(stats.memory.limitBytes == 1 << 20)
    }
}
