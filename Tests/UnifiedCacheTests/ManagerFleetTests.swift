import Foundation
import TestSupport
import Testing
import TestSupport
@testable import UnifiedCache

/// The manager's side of the shared tier (CONTRACT §6) against an in-memory one: shared hits, the fill lease and
/// its retries, fetched values shared, the raw PUT that the disk refused taken back from the fleet, events and
/// resets applied to the local tiers. Redis itself is tested in the fleet tests.
@Suite(.timeLimit(.minutes(2))) struct ManagerFleetTests {
    private func manager(
        shared: InMemorySharedTier, secondTier: (any SecondTier)? = nil,
        clock: ManualWallClock = ManualWallClock(instant("2026-06-01T12:00:00Z"))
    ) -> UnifiedCacheManager {
        let cache = UnifiedCacheManager(
            configuration: MemoryTierConfiguration(), secondTier: secondTier, sharedTier: shared, clock: clock,
            ticker: ManualClock(), logger: quietLogger())
        cache.startSharedTier()
        return cache
    }

    @Test func aFreshSharedCopyIsAHitKeptLocally() async throws {
        let shared = InMemorySharedTier([entry("k", body: "fleet", ttl: 600)])
        let cache = manager(shared: shared)
        let fetcher = ScriptedFetcher(body: "fetched")
        let first = try await cache.get(request("k"), policy: .ttl(.seconds(60)), fetcher: fetcher)
        let second = try await cache.get(request("k"), policy: .ttl(.seconds(60)), fetcher: fetcher)
        #expect(first.outcome == .hit && first.tier == .shared && text(first.entry) == "fleet")
        #expect(second.tier == .memory)
        #expect(fetcher.count == 0)
        #expect(shared.state.withLockedValue { $0.claimCount } == 0)
    }

    @Test func theLeaseHolderFetchesAndSharesTheValue() async throws {
        let shared = InMemorySharedTier()
        let cache = manager(shared: shared)
        let result = try await cache.get(request("k"), policy: .ttl(.seconds(60)), fetcher: ScriptedFetcher(body: "fetched"))
        #expect(result.outcome == .miss)
        #expect(shared.state.withLockedValue { $0.entries["k"] }.map(text) == "fetched")
        #expect(shared.state.withLockedValue { $0.claimCount } == 1)
    }

    /// CONTRACT §10.4: the requests that joined a fleet miss are answered from the fetched value while the
    /// leader's store (which gives the fill lease back) is still under way; the leader answers after it.
    @Test func joinedRequestsAreAnsweredBeforeTheSharedStore() async throws {
        let shared = InMemorySharedTier()
        let storeGate = Latch()
        shared.state.withLockedValue { $0.storeGate = storeGate }
        let cache = manager(shared: shared)
        let fetcher = HeldFetcher(body: "fetched")
        let leader = Task { try await cache.get(request("k"), policy: .ttl(.seconds(60)), fetcher: fetcher) }
        await fetcher.waitForStarts(1)
        let joiner = Task { try await cache.get(request("k"), policy: .ttl(.seconds(60)), fetcher: fetcher) }
        await waitUntil("the second request joins the load") { cache.coalescedWaiters(for: "k") == 1 }
        fetcher.open()
        // Answered with the store still held (a joiner that waited for it would never come back here). The joiner is
        // told before the leader begins its store: the test waits for that begin, which the gate then holds.
        let joined = try await joiner.value
        #expect(joined.outcome == .coalesced && text(joined.entry) == "fetched")
        await waitUntil("the leader's store begins") { shared.state.withLockedValue { $0.storesBegun } == 1 }
        #expect(shared.state.withLockedValue { $0.stores } == 0)
        storeGate.open()
        let led = try await leader.value
        #expect(led.outcome == .miss)
        #expect(shared.state.withLockedValue { $0.stores } == 1)
    }

    /// The leader holds its fill lease while its fetch lasts (the fetch may wait for a slot longer than the lease
    /// lives), and lets go of it once the fetch is over.
    @Test func theLeaderHoldsItsLeaseWhileItsFetchLasts() async throws {
        let shared = InMemorySharedTier()
        let cache = manager(shared: shared)
        let fetcher = HeldFetcher(body: "fetched")
        let leader = Task { try await cache.get(request("k"), policy: .ttl(.seconds(60)), fetcher: fetcher) }
        await fetcher.waitForStarts(1)
        await waitUntil("the lease is held") { shared.state.withLockedValue { $0.holding["k"] } == "t1" }
        fetcher.open()
        #expect(try await leader.value.outcome == .miss)
        await waitUntil("the hold ends with the fetch") { shared.state.withLockedValue { $0.holdsEnded } == 1 }
        #expect(shared.state.withLockedValue { $0.holding.isEmpty })
    }

    @Test func aFollowerAnswersWithTheLeadersValue() async throws {
        let shared = InMemorySharedTier()
        shared.state.withLockedValue { state in
            state.claims = [.follower]
            state.fills = [entry("k", body: "leader's", ttl: 600)]
        }
        let cache = manager(shared: shared)
        let fetcher = ScriptedFetcher(body: "fetched")
        let result = try await cache.get(request("k"), policy: .ttl(.seconds(60)), fetcher: fetcher)
        #expect(result.outcome == .coalesced && text(result.entry) == "leader's")
        #expect(fetcher.count == 0)
        #expect(try #require(cache.ready("k", policy: .ttl(.seconds(60)))).tier == .memory)
    }

    /// A follower whose leader gives up without a value claims the lease again; after three claims it fetches
    /// itself, once.
    @Test func aFollowerClaimsThreeTimesThenFetchesItself() async throws {
        let shared = InMemorySharedTier()
        shared.state.withLockedValue { state in state.claims = [.follower, .follower, .follower, .follower] }
        let cache = manager(shared: shared)
        let fetcher = ScriptedFetcher(body: "fetched")
        let result = try await cache.get(request("k"), policy: .ttl(.seconds(60)), fetcher: fetcher)
        #expect(result.outcome == .miss && text(result.entry) == "fetched")
        #expect(fetcher.count == 1)
        #expect(shared.state.withLockedValue { $0.claimCount } == UnifiedCacheManager.fillClaims)
    }

    /// A follower whose second claim makes it the leader fetches then.
    @Test func aFollowerBecomesTheLeaderWhenTheLeaseIsFree() async throws {
        let shared = InMemorySharedTier()
        shared.state.withLockedValue { state in state.claims = [.follower, .leader(token: "mine")] }
        let cache = manager(shared: shared)
        let fetcher = ScriptedFetcher(body: "fetched")
        let result = try await cache.get(request("k"), policy: .ttl(.seconds(60)), fetcher: fetcher)
        #expect(result.outcome == .miss && fetcher.count == 1)
        #expect(shared.state.withLockedValue { $0.claimCount } == 2)
    }

    /// A shared tier that cannot be asked costs the fleet a hit, never the answer.
    @Test func anUnavailableSharedTierFallsBackToTheUpstream() async throws {
        let shared = InMemorySharedTier()
        shared.state.withLockedValue { $0.unavailable = true }
        let cache = manager(shared: shared)
        let result = try await cache.get(request("k"), policy: .ttl(.seconds(60)), fetcher: ScriptedFetcher(body: "fetched"))
        #expect(result.outcome == .miss && text(result.entry) == "fetched")
    }

    /// §4 with §6: a raw PUT goes to the shared tier first; when the disk then refuses it, the shared copy is
    /// taken back, so that no tier of any instance holds what was not acknowledged.
    @Test func aRawPutTheDiskRefusedIsTakenBackFromTheFleet() async throws {
        let shared = InMemorySharedTier()
        let disk = DictionarySecondTier()
        disk.refusesWrites.withLockedValue { $0 = true }
        let cache = manager(shared: shared, secondTier: disk)
        await #expect(throws: PutError.self) {
            _ = try await cache.put(key: "raw1", body: bytes("v"), ttl: .seconds(60))
        }
        #expect(shared.state.withLockedValue { $0.stores } == 1)
        #expect(shared.state.withLockedValue { $0.entries["raw1"] } == nil)
        #expect(shared.state.withLockedValue { $0.invalidations } == [.key("raw1")])
        #expect(await cache.peek("raw1") == nil)
    }

    /// When the shared tier took the value and then cannot be asked to drop it after the disk refused it, the error
    /// says so (other instances may serve it).
    @Test func aRefusedRawPutTheFleetCannotTakeBackIsTheErrorsLeftover() async throws {
        let shared = InMemorySharedTier()
        let storeGate = Latch()
        shared.state.withLockedValue { $0.storeGate = storeGate }
        let disk = DictionarySecondTier()
        disk.refusesWrites.withLockedValue { $0 = true }
        let cache = manager(shared: shared, secondTier: disk)
        let put = Task { try await cache.put(key: "raw1", body: bytes("v"), ttl: .seconds(60)) }
        await waitUntil("the shared store begins") { shared.state.withLockedValue { $0.storesBegun } == 1 }
        shared.state.withLockedValue { $0.unavailable = true }
        storeGate.open()
        let unavailable = SharedTierUnavailable(reason: "test: unavailable")
        await #expect(throws: PutError.notStored(reason: "no space left on device", leftover: .shared(unavailable))) {
            try await put.value
        }
        #expect(shared.state.withLockedValue { $0.entries["raw1"] } != nil)
    }

    /// A raw PUT the fleet cannot be told of stores nothing anywhere.
    @Test func aRawPutWithoutTheFleetStoresNothing() async throws {
        let shared = InMemorySharedTier()
        shared.state.withLockedValue { $0.unavailable = true }
        let disk = DictionarySecondTier()
        let cache = manager(shared: shared, secondTier: disk)
        await #expect(throws: PutError.self) {
            _ = try await cache.put(key: "raw1", body: bytes("v"), ttl: .seconds(60))
        }
        await cache.flush()
        #expect(disk.stores == 0)
        #expect(await cache.peek("raw1") == nil)
    }

    /// Another instance's invalidation drops the local copies; a reset (invalidations may have been missed) drops
    /// every local entry, memory and disk.
    @Test func eventsAndResetsDropLocalEntries() async throws {
        let shared = InMemorySharedTier()
        let disk = DictionarySecondTier()
        let cache = manager(shared: shared, secondTier: disk)
        for key in ["a", "b", "c"] {
            _ = try await cache.get(request(key), policy: .ttl(.seconds(60)), fetcher: ScriptedFetcher(body: key))
        }
        await cache.flush()
        shared.deliver(.invalidate(.key("a")))
        #expect(cache.ready("a", policy: .ttl(.seconds(60))) == nil)
        #expect(cache.ready("b", policy: .ttl(.seconds(60))) != nil)
        shared.deliver(.reset)
        await cache.flush()
        #expect(cache.ready("b", policy: .ttl(.seconds(60))) == nil)
        #expect(cache.ready("c", policy: .ttl(.seconds(60))) == nil)
        #expect(disk.stored.isEmpty)
    }

    /// CONTRACT §6.4: another instance's newly fetched value replaces the local copy but not a refresh in flight here,
    /// which stores its own fetch and shares it (so that it replaces the other copies fleet-wide); an invalidation of
    /// the key in the same place keeps the refresh from storing what may predate it.
    @Test(arguments: [SharedTierEvent.replaced("k"), .invalidate(.key("k"))])
    func aRefreshInFlightOutlivesAnotherInstancesFillButNotAnInvalidation(_ event: SharedTierEvent) async throws {
        let shared = InMemorySharedTier()
        let cache = manager(shared: shared)
        _ = try await cache.get(request("k"), policy: .ttl(.seconds(60)), fetcher: ScriptedFetcher(body: "old"))
        let storesBefore = shared.state.withLockedValue { $0.stores }
        let fetcher = HeldFetcher(body: "refreshed")
        let refresh = Task { try await cache.get(request("k"), policy: .ttl(.seconds(60)), fetcher: fetcher, control: .refresh) }
        await fetcher.waitForStarts(1)
        shared.deliver(event)
        #expect(cache.ready("k", policy: .ttl(.seconds(60))) == nil, "the local copy is dropped at once")
        fetcher.open()
        let refreshed = try await refresh.value
        #expect(refreshed.outcome == .refresh && text(refreshed.entry) == "refreshed")
        let local = cache.ready("k", policy: .ttl(.seconds(60))).map { text($0.entry) }
        let stores = shared.state.withLockedValue { $0.stores } - storesBefore
        if event == .replaced("k") {
            #expect(local == "refreshed" && stores == 1)
        } else {
            #expect(local == nil && stores == 0)
        }
    }

    /// A restarted instance catching up with the fleet's log (CONTRACT §6.6) serves nothing its disk stored before
    /// start-up (a missed change may concern it): it asks the fleet instead, and its disk again once caught up.
    @Test func theDiskWaitsUntilTheSharedTierVouchesForIt() async throws {
        let shared = InMemorySharedTier([entry("k", body: "fleet", ttl: 600)])
        let disk = DictionarySecondTier()
        _ = await disk.store(entry("k", body: "old", ttl: 600))
        _ = await disk.store(entry("d", body: "disk", ttl: 600))
        shared.state.withLockedValue { $0.vouches = false }
        let cache = manager(shared: shared, secondTier: disk)
        let fetcher = ScriptedFetcher(body: "fetched")
        let catchingUp = try await cache.get(request("k"), policy: .ttl(.seconds(60)), fetcher: fetcher)
        let rawWhileCatchingUp = await cache.peek("d")
        shared.state.withLockedValue { $0.vouches = true }
        let vouched = try await cache.get(request("d"), policy: .ttl(.seconds(60)), fetcher: fetcher)
        #expect(catchingUp.tier == .shared && text(catchingUp.entry) == "fleet")
        #expect(rawWhileCatchingUp == nil)
        #expect(vouched.tier == .disk && text(vouched.entry) == "disk")
        #expect(fetcher.count == 0)
    }

    /// CONTRACT §4: an invalidation is acknowledged only once memory and disk dropped the entry. A disk that cannot
    /// delete (read-only) makes each kind of invalidation throw, after memory dropped it and the fleet was told; with
    /// the shared tier down too, both are said.
    @Test func aDiskThatCannotDeleteMakesEveryInvalidationThrowAfterTheRestIsDone() async throws {
        let disk = DictionarySecondTier([
            entry("raw:a"), entry("raw:b"), entry("subscription:alice", namespace: "subscription"),
        ])
        let shared = InMemorySharedTier()
        let cache = manager(shared: shared, secondTier: disk)
        _ = try await cache.get(request("raw:a"), policy: .ttl(.seconds(60)), fetcher: ScriptedFetcher(body: "v"))
        #expect(cache.statistics().memory.entries == 1)
        disk.refusesRemovals.withLockedValue { $0 = true }
        let readOnly = InvalidationIncomplete.secondTier("read-only file system", shared: nil)

        await #expect(throws: readOnly) { try await cache.remove("raw:a") }
        #expect(cache.statistics().memory.entries == 0)
        #expect(shared.state.withLockedValue { $0.invalidations } == [.key("raw:a")])
        await #expect(throws: readOnly) { try await cache.invalidate(prefix: "raw:") }
        await #expect(throws: readOnly) { try await cache.invalidate(namespaces: ["subscription"], user: "alice") }
        await #expect(throws: readOnly) { try await cache.erase(user: "alice") }
        await #expect(throws: readOnly) { try await cache.removeAll() }
        #expect(shared.state.withLockedValue { $0.invalidations.count } >= 5)

        shared.state.withLockedValue { $0.unavailable = true }
        await #expect(throws: InvalidationIncomplete.secondTier(
            "read-only file system", shared: SharedTierUnavailable(reason: "test: unavailable"))
        ) { try await cache.invalidate(prefix: "raw:") }

        disk.refusesRemovals.withLockedValue { $0 = false }
        await #expect(throws: InvalidationIncomplete.shared(SharedTierUnavailable(reason: "test: unavailable"))) {
            try await cache.invalidate(prefix: "raw:")
        }
        shared.state.withLockedValue { $0.unavailable = false }
        #expect(try await cache.invalidate(prefix: "raw:") == 0)
        #expect(disk.stored.keys.sorted() == ["subscription:alice"])
    }
}
