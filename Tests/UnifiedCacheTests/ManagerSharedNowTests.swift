import Foundation
import NIOConcurrencyHelpers
import Testing
import TestSupport
@testable import UnifiedCache

/// `look`'s pending shared read: a shared hit answered on the thread that got Redis's reply, without tasks. It must
/// answer and count exactly as `get` would, or stand aside (no pending read, or a nil answer with nothing recorded)
/// for `get` to decide.
@Suite(.timeLimit(.minutes(1))) struct ManagerSharedNowTests {
    private func manager(
        _ shared: InMemorySharedTier, secondTier: (any SecondTier)? = nil,
        clock: ManualWallClock = ManualWallClock(instant("2026-06-01T12:00:00Z"))
    ) -> UnifiedCacheManager {
        shared.state.withLockedValue { $0.readsNow = true }
        let cache = UnifiedCacheManager(
            configuration: MemoryTierConfiguration(), secondTier: secondTier, sharedTier: shared, clock: clock,
            ticker: ManualClock(), logger: quietLogger())
        cache.startSharedTier()
        return cache
    }

    /// What `answer` was called with, and how often.
    private final class Answers: Sendable {
        let calls = NIOLockedValueBox<[CacheResult?]>([])
        func record(_ result: CacheResult?) { calls.withLockedValue { $0.append(result) } }
    }

    /// A value the shared tier read for one key that holds another (written there by someone else, from a tier that
    /// does not check what it read) is answered `nil` for `get` to decide, and not promoted.
    @Test func aSharedValueHoldingAnotherKeyIsNeitherAnsweredNorPromoted() {
        let shared = InMemorySharedTier()
        shared.state.withLockedValue { $0.entries["k"] = entry("other", body: "not k's", ttl: 600) }
        let cache = manager(shared)
        let answers = Answers()
        #expect(cache.join(request("k")) { answers.record($0.flatMap { try? $0.get() }) })
        shared.answerPendingReads()
        #expect(answers.calls.withLockedValue { $0.count == 1 && $0[0] == nil })
        #expect(cache.memory.peek("k") == nil && cache.memory.peek("other") == nil)
        #expect(cache.statistics().requests.requests == 0)
    }

    @Test func aFreshSharedValueIsAnsweredPromotedAndCountedOnce() throws {
        let shared = InMemorySharedTier([entry("k", body: "fleet", ttl: 600)])
        let cache = manager(shared)
        let answers = Answers()
        #expect(cache.join(request("k")) { answers.record($0.flatMap { try? $0.get() }) })
        #expect(answers.calls.withLockedValue { $0.isEmpty })
        shared.answerPendingReads()
        let results = answers.calls.withLockedValue { $0 }
        #expect(results.count == 1)
        let result = try #require(results.first ?? nil)
        #expect(result.outcome == .hit && result.tier == .shared && text(result.entry) == "fleet")
        #expect(cache.statistics().requests.hits == 1 && cache.statistics().requests.requests == 1)
        #expect(shared.state.withLockedValue { $0.hitsNow } == 1)
        #expect(try #require(cache.ready("k", policy: .ttl(.seconds(60)))).tier == .memory)
    }

    /// A miss, a value past its freshness, and a remembered 404 are `get`'s to answer: nothing is recorded, nothing
    /// promoted, and the tier counts no hit.
    @Test func whatIsNotAFreshValueIsLeftToGet() {
        let clock = ManualWallClock(instant("2026-06-01T12:00:00Z"))
        let notFound = CacheEntry(
            key: "gone", namespace: "test", user: "alice", kind: .notFound, body: [], contentType: "application/json",
            etag: ETag.make(for: []), storedAt: clock.now(), expiresAt: clock.now().addingTimeInterval(600),
            staleUntil: clock.now().addingTimeInterval(600))
        let shared = InMemorySharedTier([
            entry("old", storedAt: clock.now().addingTimeInterval(-120), ttl: 60, stale: 600), notFound,
        ])
        let cache = manager(shared, clock: clock)
        let answers = Answers()
        for key in ["missing", "old", "gone"] {
            #expect(cache.join(request(key)) { answers.record($0.flatMap { try? $0.get() }) })
        }
        shared.answerPendingReads()
        #expect(answers.calls.withLockedValue { $0.count } == 3)
        #expect(answers.calls.withLockedValue { $0.allSatisfy { $0 == nil } })
        #expect(cache.statistics().requests.requests == 0)
        #expect(shared.state.withLockedValue { $0.hitsNow } == 0)
        #expect(cache.ready("old", policy: .ttl(.seconds(60))) == nil)
    }

    /// An invalidation between the read and its reply: the value read before it is neither answered nor kept.
    @Test func anInvalidationBeforeTheReplyKeepsTheValueOut() async throws {
        let shared = InMemorySharedTier([entry("k", body: "before", ttl: 600)])
        let cache = manager(shared)
        let answers = Answers()
        #expect(cache.join(request("k")) { answers.record($0.flatMap { try? $0.get() }) })
        // The fleet's copy goes with the invalidation; the pending read replies with what it read before it.
        let before = try #require(shared.state.withLockedValue { $0.entries["k"] })
        _ = try await cache.invalidate(key: "k")
        shared.state.withLockedValue { $0.entries["k"] = before }
        shared.answerPendingReads()
        #expect(answers.calls.withLockedValue { $0.count == 1 && $0[0] == nil })
        #expect(cache.ready("k", policy: .ttl(.seconds(60))) == nil)
        #expect(cache.statistics().requests.requests == 0)
    }

    /// With a second tier (whose copy comes first) the read is not offered; while a load of the key is pending, a
    /// request joins the load and the shared tier is not asked.
    @Test func notOfferedWithASecondTierOrAPendingLoad() async throws {
        let withDisk = manager(InMemorySharedTier([entry("k", ttl: 600)]), secondTier: DictionarySecondTier())
        #expect(!withDisk.readsSharedWithoutTasks)
        #expect(!withDisk.join(request("k")) { _ in })
        #expect(!makeManager().readsSharedWithoutTasks)

        let shared = InMemorySharedTier()
        let cache = manager(shared)
        #expect(cache.readsSharedWithoutTasks)
        let fetcher = HeldFetcher(body: "fetched")
        let load = Task { try await cache.get(request("k"), policy: .ttl(.seconds(60)), fetcher: fetcher) }
        await fetcher.waitForStarts(1)
        let told = Signals<CacheOutcome?>()
        #expect(cache.join(request("k")) { told.signal(try? $0?.get().outcome) })
        #expect(shared.state.withLockedValue { $0.pendingReads.isEmpty })
        fetcher.open()
        _ = try await load.value
        #expect(await told.next() == .some(.coalesced))
    }
}
