import Foundation
import HTTPRouting
@testable import Settings
import TestSupport
import Testing
import UnifiedCache

@testable import UnicacheApp

/// The fast path's per-second memory of warm targets (RenderedAnswers): reused only while nothing changes.
@Suite(.timeLimit(.minutes(10))) struct RenderedAnswersTests {
    let target = "/v1/users/alice/subscription"

    @Test func hitsInOneSecondShareOneRenderedAnswerAndTheNextSecondRendersAgain() async throws {
        let h = AppHarness()
        _ = try await h.send(.get, target)
        h.clock.advance(by: 5)
        let first = try await h.send(.get, target)
        let second = try await h.send(.get, target)
        #expect(first.header("X-Cache") == "HIT" && first.header("Age") == "5")
        let slot = try #require(first.memo)
        #expect(second.memo === slot)
        #expect(second == first)
        // Dated with its second: the server dates no rendered answer itself.
        #expect(first.header("Date") == HTTPDates.httpDate(h.clock.now()))

        h.clock.advance(by: 1)
        let later = try await h.send(.get, target)
        #expect(later.header("Date") == HTTPDates.httpDate(h.clock.now()))
        #expect(later.header("Date") != first.header("Date"))
        #expect(later.header("Age") == "6")
        #expect(later.header("Cache-Control") == "private, max-age=294")
        #expect(later.memo !== slot)
    }

    @Test func aDeletedEntryIsNotAnsweredFromMemoryWithinTheSameSecond() async throws {
        let h = AppHarness()
        _ = try await h.send(.get, target)
        let hit = try await h.send(.get, target)
        #expect(hit.header("X-Cache") == "HIT")
        let deleted = try await h.send(.delete, "/v1/cache/subscription:alice", admin: true)
        #expect(deleted.status == 204)
        let next = try await h.send(.get, target)
        #expect(next.header("X-Cache") == "MISS")
        #expect(h.fetcher.count("subscription:alice") == 2)
    }

    @Test func aRefreshedEntryInTheSameSecondIsServedWithItsNewBody() async throws {
        let h = AppHarness()
        _ = try await h.send(.get, target)
        let hit = try await h.send(.get, target)
        let refreshed = try await h.send(.get, target + "?refresh=true")
        #expect(refreshed.header("X-Cache") == "REFRESH")
        let after = try await h.send(.get, target)
        #expect(after.header("X-Cache") == "HIT")
        #expect(after.header("ETag") == refreshed.header("ETag"))
        #expect(after.header("ETag") != hit.header("ETag"))
        #expect(after.body == refreshed.body)
    }

    /// A read resolved in one second and answered in the next is not remembered for the next: the target resolves
    /// afresh there (a "today" key past midnight names the new day, not the one the slow fetch began in).
    @Test func aReadResolvedBeforeMidnightAndAnsweredAfterLeavesTheNewDayToItsOwnKey() async throws {
        let h = AppHarness()
        let today = "/v1/users/alice/health/today"
        h.clock.set(try #require(ISO8601DateFormatter().date(from: "2026-11-22T23:59:59Z")).addingTimeInterval(0.5))
        h.fetcher.close()
        async let slow = h.send(.get, today)
        await h.fetcher.waitForCalls(1)
        h.clock.advance(by: 1)  // 2026-11-23T00:00:00.5Z
        h.fetcher.open()
        let late = try await slow
        #expect(late.header("X-Cache") == "MISS")
        #expect(late.header("Date") == "Mon, 23 Nov 2026 00:00:00 GMT")
        #expect(h.fetcher.calls.map(\.key) == ["health:today:alice:2026-11-22"])

        let next = try await h.send(.get, today)
        #expect(next.header("X-Cache") == "MISS")
        #expect(h.fetcher.calls.map(\.key) == ["health:today:alice:2026-11-22", "health:today:alice:2026-11-23"])
        let again = try await h.send(.get, today)
        #expect(again.header("X-Cache") == "HIT")
        #expect(again.body == next.body)
    }

    @Test func conditionalRequestsAreRenderedPerRequest() async throws {
        let h = AppHarness()
        let miss = try await h.send(.get, target)
        let etag = try #require(miss.header("ETag"))
        _ = try await h.send(.get, target)
        let notModified = try await h.send(.get, target, headers: [("If-None-Match", etag)])
        #expect(notModified.status == 304 && notModified.body.isEmpty)
        #expect(notModified.memo == nil)
        #expect(notModified.header("Date") == nil)  // the server's
    }
}

/// The router's shortcut: only remembered plain targets, and a counted hit is never routed again.
@Suite(.timeLimit(.minutes(10))) struct ShortcutTests {
    let target = "/v1/users/alice/subscription"

    /// The shortcut's answer, which for a value in memory is given now.
    func shortcut(_ h: AppHarness, _ method: HTTPMethod = .get, headers: HTTPHeaders = HTTPHeaders())
        -> (response: Response, route: String)?
    {
        guard let (answer, route) = h.app.router.shortcut?(method, target, headers, .unknown, nil) else { return nil }
        guard case .now(let response) = answer else {
            Issue.record("a value in memory is answered now")
            return nil
        }
        return (response, route)
    }

    @Test func answersOnlyTargetsAnsweredThisSecondWithTheirRoute() async throws {
        let h = AppHarness()
        #expect(shortcut(h) == nil)
        _ = try await h.send(.get, target)  // the miss remembers the target
        let answer = try #require(shortcut(h))
        #expect(answer.response.header("X-Cache") == "HIT")
        let hit = try await h.send(.get, target)
        #expect(answer.route == "/v1/users/{user}/subscription")
        #expect(answer.response == hit)
        #expect(shortcut(h, .head)?.response == hit)
        #expect(shortcut(h, .delete) == nil)
        #expect(shortcut(h, headers: ["Cache-Control": "no-cache"]) == nil)
        #expect(shortcut(h, headers: ["If-None-Match": "*"]) == nil)
        #expect(shortcut(h, headers: ["cache-CONTROL": "no-cache"]) == nil)
        #expect(shortcut(h, headers: ["X-Other": "1", "if-none-match": "*"]) == nil)
        // Names that share a blocking name's bit (its length, its first letter) but are not it: still plain.
        #expect(shortcut(h, headers: ["Cache-Contrel": "1", "In-None-Match": "*"])?.response == hit)
        h.clock.advance(by: 1)
        #expect(shortcut(h) == nil)
    }

    /// A wall clock stepped back (NTP, a resumed VM) leaves a table of a second still to come: the seconds after the
    /// step remember their own answers, so the shortcut goes on answering.
    @Test func aWallClockSteppedBackStillTakesTheShortcut() async throws {
        let h = AppHarness()
        _ = try await h.send(.get, target)
        #expect(shortcut(h) != nil)
        h.clock.advance(by: -600)
        #expect(shortcut(h) == nil)  // the table is of a second that has not come
        _ = try await h.send(.get, target)  // routed, and remembered for this second
        #expect(shortcut(h)?.response.header("X-Cache") == "HIT")
    }

    @Test func everyShortcutHitIsCountedOnce() async throws {
        let h = AppHarness()
        _ = try await h.send(.get, target)
        for _ in 0..<5 { _ = try await h.send(.get, target) }
        let stats = try await h.send(.get, "/stats")
        let cache = try #require(stats.json["cache"] as? [String: Any])
        #expect(cache["hits"] as? Int == 5)
        #expect(cache["misses"] as? Int == 1)
    }
}

/// Async answers are remembered too: coalesced waiters share one answer; refreshes are never remembered.
@Suite(.timeLimit(.minutes(10))) struct RenderedAsyncAnswersTests {
    let target = "/v1/users/alice/subscription"

    @Test func coalescedWaitersShareOneAnswerAndTheNextRequestIsAHit() async throws {
        let h = AppHarness()
        h.fetcher.close()
        let answers = try await withThrowingTaskGroup(of: Response.self) { group in
            for _ in 0..<20 { group.addTask { try await h.send(.get, target) } }
            await h.fetcher.waitForCalls(1)
            // Every other request joined the load before it ends: one started late would be a hit, not coalesced
            // (under ThreadSanitizer one was: 18 of 19).
            await waitUntil("19 requests join the load") { h.app.cache.coalescedWaiters(for: "subscription:alice") >= 19 }
            h.fetcher.open()
            return try await group.reduce(into: []) { $0.append($1) }
        }
        let coalesced = answers.filter { $0.header("X-Cache") == "COALESCED" }
        #expect(coalesced.count == 19)
        #expect(Set(coalesced.compactMap { $0.memo.map(ObjectIdentifier.init) }).count == 1)
        let hit = try await h.send(.get, target)
        #expect(hit.header("X-Cache") == "HIT")
        #expect(hit.header("Cache-Status") == "unicache; hit")
        #expect(h.fetcher.count("subscription:alice") == 1)
    }

    /// The leader's MISS, answered between its waiters' answers, does not replace the answer they share.
    @Test func aMissAnsweredBetweenItsWaitersLeavesTheirSharedAnswer() throws {
        let answers = RenderedAnswers()
        let now = AppHarness.start
        let stored = CacheEntry(
            key: "subscription:alice", namespace: "subscription", user: "alice", body: Array("{}".utf8),
            contentType: "application/json", etag: "\"e\"", storedAt: now, expiresAt: now.addingTimeInterval(300),
            staleUntil: now.addingTimeInterval(300))
        let resolved = ResolvedResource(
            fetch: FetchRequest(key: stored.key, namespace: "subscription", user: "alice", path: "/users/alice/subscription"),
            policy: .ttl(.seconds(300)), resolvedAt: now)
        let request = try Request(method: .get, target: target)
        func answer(_ outcome: CacheOutcome) throws -> Response {
            answers.answer(
                CacheResult(
                    entry: stored, outcome: outcome, tier: nil, ageSeconds: 0, remainingFreshSeconds: 300,
                    stored: outcome == .miss), to: request,
                on: try #require(ResourceTable.rows.first { $0.namespace == "subscription" }), resolved: resolved, now: now)
        }
        let first = try answer(.coalesced)
        let miss = try answer(.miss)
        let second = try answer(.coalesced)
        #expect(miss.header("X-Cache") == "MISS")
        #expect(first.memo != nil && first.memo === second.memo)
    }

    @Test func refreshTargetsAreNeverShortcut() async throws {
        let h = AppHarness()
        _ = try await h.send(.get, target)
        for _ in 0..<3 {
            let refreshed = try await h.send(.get, target + "?refresh=true")
            #expect(refreshed.header("X-Cache") == "REFRESH")
        }
        #expect(h.fetcher.count("subscription:alice") == 4)
        #expect(h.app.router.shortcut?(.get, target + "?refresh=true", HTTPHeaders(), .unknown, nil) == nil)
    }
}
