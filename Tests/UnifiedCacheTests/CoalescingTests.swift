import Foundation
import NIOConcurrencyHelpers
import TestSupport
import Testing
@testable import UnifiedCache

/// Waits (bounded) until `count` requests are parked on the key's shared load.
func waitForWaiters(_ cache: UnifiedCacheManager, key: String, count: Int) async {
    await waitUntil("\(count) requests wait on \(key)") { cache.coalescedWaiters(for: key) >= count }
}

@Suite(.timeLimit(.minutes(10))) struct CoalescingTests {
    static let stampede = 1000

    @Test func stampedeOfOneColdKeyMakesOneFetch() async throws {
        let cache = makeManager()
        let fetcher = HeldFetcher(body: "shared")
        let results = await withTaskGroup(of: Result<CacheResult, CacheError>.self) { group in
            for _ in 0..<Self.stampede {
                group.addTask {
                    do throws(CacheError) {
                        return .success(try await cache.get(request("cold"), policy: .ttl(.seconds(60)), fetcher: fetcher))
                    } catch {
                        return .failure(error)
                    }
                }
            }
            await fetcher.waitForStarts(1)
            await waitForWaiters(cache, key: "cold", count: Self.stampede - 1)
            fetcher.open()
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(fetcher.count == 1)
        let values = try results.map { try $0.get() }
        #expect(values.count == Self.stampede)
        #expect(values.allSatisfy { $0.entry == values[0].entry })
        #expect(values.filter { $0.outcome == .miss }.count == 1)
        #expect(values.filter { $0.outcome == .coalesced }.count == Self.stampede - 1)
        let stats = cache.statistics()
        #expect(stats.requests.misses == 1 && stats.requests.coalesced == Self.stampede - 1)
        #expect(stats.requests.requests == Self.stampede)
        #expect(stats.upstream.fetches == 1 && stats.upstream.failures == 0)
    }

    /// A request joined by callback (`look`'s pending read, what the HTTP side does for a stampede's coalesced requests)
    /// is answered and counted as an awaiting one is, its failure included; with no load in flight it joins nothing.
    @Test(arguments: [true, false])
    func aCallbackJoinsTheLoadInFlightAndIsToldItsOutcome(fails: Bool) async throws {
        let cache = makeManager()
        #expect(!cache.join(request("k")) { _ in Issue.record("nothing to join, never called") })
        let fetcher = fails ? HeldFetcher(.failure(.unavailable("boom"))) : HeldFetcher(body: "shared")
        let leader = Task { () async -> Result<CacheResult, CacheError> in
            do throws(CacheError) {
                return .success(try await cache.get(request("k"), policy: .ttl(.seconds(60)), fetcher: fetcher))
            } catch {
                return .failure(error)
            }
        }
        await fetcher.waitForStarts(1)
        let answers = Signals<Result<CacheResult, CacheError>>()
        let joined = cache.join(request("k")) { answers.signal($0 ?? .failure(.notCached)) }
        #expect(joined && cache.coalescedWaiters(for: "k") == 1)
        fetcher.open()
        let told = try #require(await answers.next())
        let led = await leader.value
        let stats = cache.statistics()
        if fails {
            #expect(throws: CacheError.self) { try told.get() }
            #expect(stats.requests.misses == 1 && stats.requests.coalesced == 1)
        } else {
            let (value, first) = (try told.get(), try led.get())
            #expect(value.outcome == .coalesced && first.outcome == .miss && value.entry == first.entry)
            #expect(stats.requests.misses == 1 && stats.requests.coalesced == 1 && stats.upstream.fetches == 1)
        }
    }

    /// Stress: a thousand requests join one load by callback from many tasks while it finishes. Each one that joined
    /// is told exactly once (with the fetched value), each one that came too late joins nothing and finds the value
    /// stored; one fetch in all.
    @Test func aThousandCallbacksJoiningWhileTheLoadEndsAreEachToldOnce() async throws {
        let cache = makeManager()
        let fetcher = HeldFetcher(body: "shared")
        let leader = Task { try? await cache.get(request("hot"), policy: .ttl(.seconds(60)), fetcher: fetcher) }
        await fetcher.waitForStarts(1)
        let told = NIOLockedValueBox([Int: Int]())
        let outcomes = await withTaskGroup(of: (joined: Bool, late: CacheOutcome?).self) { group in
            // The load ends while requests are still joining: once a hundred have.
            group.addTask {
                await waitUntil("a hundred requests joined") { cache.coalescedWaiters(for: "hot") >= 100 }
                fetcher.open()
                return (false, .hit)
            }
            for index in 0..<Self.stampede {
                group.addTask {
                    let joined = cache.join(request("hot")) { result in
                        if case .success(let result)? = result, text(result.entry) == "shared" {
                            told.withLockedValue { $0[index, default: 0] += 1 }
                        }
                    }
                    if joined { return (true, nil) }
                    return (false, try? await cache.get(request("hot"), policy: .ttl(.seconds(60)), fetcher: fetcher).outcome)
                }
            }
            return await group.reduce(into: []) { $0.append($1) }
        }
        _ = await leader.value
        let joined = outcomes.filter(\.joined).count
        #expect(joined >= 100)
        await waitUntil("every joined request is told") { told.withLockedValue { $0.count } == joined }
        #expect(told.withLockedValue { $0.values.allSatisfy { $0 == 1 } })
        #expect(outcomes.filter { !$0.joined }.allSatisfy { $0.late == .hit })
        #expect(fetcher.count == 1)
        #expect(cache.statistics().requests.coalesced == joined)
    }

    @Test func stampedeWithAFailingFetchSharesTheErrorAndTheNextGetRetries() async throws {
        let cache = makeManager()
        let fetcher = HeldFetcher(.failure(.unavailable("boom")))
        let results = await withTaskGroup(of: CacheError?.self) { group in
            for _ in 0..<Self.stampede {
                group.addTask {
                    do throws(CacheError) {
                        _ = try await cache.get(request("cold"), policy: .ttl(.seconds(60)), fetcher: fetcher)
                        return nil
                    } catch {
                        return error
                    }
                }
            }
            await fetcher.waitForStarts(1)
            await waitForWaiters(cache, key: "cold", count: Self.stampede - 1)
            fetcher.open()
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(fetcher.count == 1)
        #expect(results.count == Self.stampede)
        #expect(results.allSatisfy { $0 == .upstreamFailed(.unavailable("boom")) })
        let stats = cache.statistics()
        #expect(stats.requests.misses == 1 && stats.requests.coalesced == Self.stampede - 1)
        #expect(stats.upstream.fetches == 1 && stats.upstream.failures == 1)
        await #expect(throws: CacheError.upstreamFailed(.unavailable("boom"))) {
            try await cache.get(request("cold"), policy: .ttl(.seconds(60)), fetcher: fetcher)
        }
        #expect(fetcher.count == 2)
    }

    @Test func concurrentForcedRefreshesMakeOneFetch() async throws {
        let cache = makeManager()
        _ = try await cache.get(request("k"), policy: .ttl(.seconds(60)), fetcher: ScriptedFetcher(body: "old"))
        let fetcher = HeldFetcher(body: "new")
        let outcomes = await withTaskGroup(of: CacheOutcome?.self) { group in
            for _ in 0..<10 {
                group.addTask {
                    try? await cache.get(request("k"), policy: .ttl(.seconds(60)), fetcher: fetcher, control: .refresh).outcome
                }
            }
            await fetcher.waitForStarts(1)
            await waitForWaiters(cache, key: "k", count: 9)
            fetcher.open()
            return await group.reduce(into: []) { $0.append($1) }
        }
        #expect(fetcher.count == 1)
        #expect(outcomes.filter { $0 == .refresh }.count == 1)
        #expect(outcomes.filter { $0 == .coalesced }.count == 9)
        #expect(cache.ready("k", policy: .ttl(.seconds(60))).map { text($0.entry) } == "new")
    }

    @Test func invalidationDuringAFetchReturnsTheResultButDoesNotStoreIt() async throws {
        let disk = DictionarySecondTier()
        let cache = makeManager(secondTier: disk)
        let fetcher = HeldFetcher(body: "outdated")
        let pending = Task { try await cache.get(request("k"), policy: .ttl(.seconds(60)), fetcher: fetcher) }
        await fetcher.waitForStarts(1)
        #expect(try await cache.invalidate(key: "k") == false)
        fetcher.open()
        let result = try await pending.value
        #expect(result.outcome == .miss && text(result.entry) == "outdated" && !result.stored)
        await cache.flush()
        #expect(cache.ready("k", policy: .ttl(.seconds(60))) == nil)
        #expect(disk.stored["k"] == nil)
        let next = try await cache.get(request("k"), policy: .ttl(.seconds(60)), fetcher: ScriptedFetcher(body: "current"))
        #expect(next.outcome == .miss && next.stored && text(next.entry) == "current")
    }

    @Test func userErasureDuringAFetchWinsToo() async throws {
        let cache = makeManager()
        let fetcher = HeldFetcher(body: "outdated")
        let pending = Task { try await cache.get(request("k", user: "bob"), policy: .ttl(.seconds(60)), fetcher: fetcher) }
        await fetcher.waitForStarts(1)
        #expect(try await cache.erase(user: "bob") == 0)
        // A request after the erasure does not join the outdated load.
        let fresh = ScriptedFetcher(body: "current")
        let after = try await cache.get(request("k", user: "bob"), policy: .ttl(.seconds(60)), fetcher: fresh)
        #expect(after.outcome == .miss && text(after.entry) == "current")
        fetcher.open()
        #expect(try await pending.value.stored == false)
        #expect(cache.ready("k", policy: .ttl(.seconds(60))).map { text($0.entry) } == "current")
    }

    @Test func aWaiterGoingAwayDoesNotCancelTheSharedFetch() async throws {
        let cache = makeManager()
        let fetcher = HeldFetcher(body: "v")
        let leader = Task { try await cache.get(request("k"), policy: .ttl(.seconds(60)), fetcher: fetcher) }
        await fetcher.waitForStarts(1)
        leader.cancel()
        fetcher.open()
        _ = try? await leader.value
        await cache.waitForPendingLoads()
        #expect(cache.ready("k", policy: .ttl(.seconds(60))).map { text($0.entry) } == "v")
    }
}
