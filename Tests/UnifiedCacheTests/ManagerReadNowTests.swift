import Foundation
import TestSupport
import Testing
@testable import UnifiedCache

/// A disk hit answered on the caller's thread (`look` through `SecondTier.loadNow`), and the cases where it
/// must leave the read to `get`: nothing read there may outlive a change made meanwhile.
@Suite(.timeLimit(.minutes(10))) struct ManagerReadNowTests {
    @Test func aDiskHitIsAnsweredOnTheCallersThreadCountedOnceAndPromoted() throws {
        let disk = DictionarySecondTier([entry("k", body: "from-disk", ttl: 600)], readsNow: true)
        let cache = makeManager(secondTier: disk)
        let first = try #require(cache.ready("k", policy: .ttl(.seconds(60))))
        #expect(first.outcome == .hit && first.tier == .disk && text(first.entry) == "from-disk")
        let second = try #require(cache.ready("k", policy: .ttl(.seconds(60))))
        #expect(second.tier == .memory)
        #expect(cache.statistics().requests.hits == 2 && cache.statistics().requests.misses == 0)
    }

    /// A value read for one key that holds another (a file moved by hand, a tier that does not check what it read)
    /// is neither answered nor promoted: it would sit in memory under the hash of the key it was read for.
    @Test func aValueHoldingAnotherKeyIsNeitherAnsweredNorPromoted() {
        let disk = DictionarySecondTier(readsNow: true)
        disk.storeMisplaced(entry("other", body: "not k's", ttl: 600), as: "k")
        let cache = makeManager(secondTier: disk)
        #expect(cache.ready("k", policy: .ttl(.seconds(60))) == nil)
        #expect(cache.memory.peek("k") == nil && cache.memory.peek("other") == nil)
        #expect(cache.statistics().requests.requests == 0)
    }

    @Test func aTierThatCannotReadNowLeavesTheReadToGet() {
        let disk = DictionarySecondTier([entry("k", body: "from-disk", ttl: 600)])
        let cache = makeManager(secondTier: disk)
        #expect(cache.ready("k", policy: .ttl(.seconds(60))) == nil)
        #expect(cache.statistics().requests.requests == 0)
    }

    @Test func anInvalidationDuringTheReadKeepsItsResultOutOfMemory() throws {
        let disk = DictionarySecondTier([entry("k", body: "old", ttl: 600)], readsNow: true)
        let cache = makeManager(secondTier: disk)
        disk.duringReadNow.withLockedValue { hook in
            hook = { _ = cache.dropLocally(KeyScope(kind: .key("k")), done: nil) }
        }
        #expect(cache.ready("k", policy: .ttl(.seconds(60))) == nil)
        #expect(cache.memory.peek("k") == nil)
        #expect(cache.statistics().requests.requests == 0)
    }

    @Test func aNewerValueStoredDuringTheReadWins() throws {
        let disk = DictionarySecondTier([entry("k", body: "old", ttl: 600)], readsNow: true)
        let cache = makeManager(secondTier: disk)
        disk.duringReadNow.withLockedValue { hook in hook = { _ = cache.memory.insert(entry("k", body: "new", ttl: 600)) } }
        #expect(cache.ready("k", policy: .ttl(.seconds(60))) == nil)
        disk.duringReadNow.withLockedValue { $0 = nil }
        let result = try #require(cache.ready("k", policy: .ttl(.seconds(60))))
        #expect(result.tier == .memory && text(result.entry) == "new")
    }

    @Test func whileASecondTierOperationIsQueuedReadsGoThroughGet() async throws {
        let disk = DictionarySecondTier(
            [entry("k", body: "v", ttl: 600), entry("other", body: "o", ttl: 600)], readsNow: true)
        let cache = makeManager(secondTier: disk)
        disk.holdRemovals()
        let invalidation = Task { try await cache.invalidate(key: "other") }
        await waitUntil("the removal is held") { disk.removalsStarted > 0 }
        #expect(cache.ready("k", policy: .ttl(.seconds(60))) == nil)
        disk.openRemovals()
        _ = try await invalidation.value
        let result = try #require(cache.ready("k", policy: .ttl(.seconds(60))))
        #expect(result.tier == .disk && text(result.entry) == "v")
    }

    @Test func aStaleOrRefreshAheadDiskCopyIsLeftToGet() {
        let clock = ManualWallClock(instant("2026-06-01T12:01:00Z"))
        let disk = DictionarySecondTier([entry("k", body: "old", ttl: 10, stale: 3600)], readsNow: true)
        let cache = makeManager(clock: clock, secondTier: disk)
        #expect(cache.ready("k", policy: .ttl(.seconds(60))) == nil)
        #expect(cache.memory.peek("k") == nil)
    }
}
