import Foundation
import HTTPRouting
@testable import Settings
import Testing
import UnifiedCache

@testable import UnicacheApp

@Suite(.timeLimit(.minutes(10))) struct ReadThroughTests {
    @Test func missThenHitWithTheContractHeaders() async throws {
        let h = AppHarness()
        let miss = try await h.send(.get, "/v1/users/alice/subscription")
        #expect(miss.status == 200)
        #expect(miss.header("X-Cache") == "MISS")
        #expect(miss.header("Cache-Status") == "unicache; fwd=miss; stored")
        #expect(miss.header("Age") == "0")
        #expect(miss.header("Cache-Control") == "private, max-age=300")
        #expect(miss.header("X-Cache-Tier") == nil)
        let etag = try #require(miss.header("ETag"))
        #expect(etag.hasPrefix("\"") && !etag.hasPrefix("W/"))

        h.clock.advance(by: 42)
        #expect(try h.isImmediate("/v1/users/alice/subscription"))
        let hit = try await h.send(.get, "/v1/users/alice/subscription")
        #expect(hit.header("X-Cache") == "HIT")
        #expect(hit.header("Cache-Status") == "unicache; hit")
        #expect(hit.header("Age") == "42")
        #expect(hit.header("Cache-Control") == "private, max-age=258")
        #expect(hit.header("X-Cache-Tier") == "memory")
        #expect(hit.header("ETag") == etag)
        #expect(hit.body == miss.body)
        #expect(h.fetcher.count("subscription:alice") == 1)
    }

    @Test func activityTypesAreNormalisedIntoOneEntry() async throws {
        let h = AppHarness()
        _ = try await h.send(.get, "/v1/users/alice/activities?types=ride,run")
        let second = try await h.send(.get, "/v1/users/alice/activities?types=Run,ride,run&days=30")
        #expect(second.header("X-Cache") == "HIT")
        let call = try #require(h.fetcher.calls.first)
        #expect(call.key == "activities:alice:ride,run:30")
        #expect(call.path == "/users/alice/activities")
        #expect(call.query == [QueryItem("days", "30"), QueryItem("types", "ride,run")])
        #expect(h.fetcher.calls.count == 1)
    }

    @Test func ifNoneMatchGives304WithoutBodyOrContentType() async throws {
        let h = AppHarness()
        let first = try await h.send(.get, "/v1/users/alice/profile")
        let etag = try #require(first.header("ETag"))
        let again = try await h.send(.get, "/v1/users/alice/profile", headers: [("If-None-Match", etag)])
        #expect(again.status == 304)
        #expect(again.body.isEmpty)
        #expect(again.header("ETag") == etag)
        // The validators and caching fields stay; no other representation metadata (RFC 9110 section 15.4.5).
        #expect(again.header("Cache-Control") != nil && again.header("Content-Type") == nil)
        let summary = try await h.send(.get, "/v1/users/alice/health/summary")
        let summaryAgain = try await h.send(
            .get, "/v1/users/alice/health/summary", headers: [("If-None-Match", try #require(summary.header("ETag")))])
        #expect(summaryAgain.status == 304 && summaryAgain.header("Content-Type") == nil)
        _ = try await h.send(.put, "/v1/cache/raw304", body: "x", admin: true)
        let raw = try await h.send(.get, "/v1/cache/raw304", admin: true)
        let rawAgain = try await h.send(
            .get, "/v1/cache/raw304", headers: [("If-None-Match", try #require(raw.header("ETag")))], admin: true)
        #expect(rawAgain.status == 304 && rawAgain.header("Content-Type") == nil && rawAgain.header("Expires") != nil)
        let other = try await h.send(.get, "/v1/users/alice/profile", headers: [("If-None-Match", "\"other\"")])
        #expect(other.status == 200)
    }

    @Test func refreshForcesOneFetch() async throws {
        let h = AppHarness()
        _ = try await h.send(.get, "/v1/users/alice/progress/streak")
        let forced = try await h.send(.get, "/v1/users/alice/progress/streak?refresh=true")
        #expect(forced.header("X-Cache") == "REFRESH")
        #expect(forced.header("Cache-Status") == "unicache; fwd=request; stored")
        let noCache = try await h.send(.get, "/v1/users/alice/progress/streak", headers: [("Cache-Control", "no-cache")])
        #expect(noCache.header("X-Cache") == "REFRESH")
        #expect(h.fetcher.count("progress:streak:alice") == 3)
    }

    @Test func onlyIfCachedNeverFetches() async throws {
        let h = AppHarness()
        let cold = try await h.send(.get, "/v1/users/alice/profile", headers: [("Cache-Control", "only-if-cached")])
        #expect(cold.status == 504)
        #expect(cold.header("Content-Type") == "application/problem+json")
        #expect(h.fetcher.calls.isEmpty)
        _ = try await h.send(.get, "/v1/users/alice/profile")
        let warm = try await h.send(.get, "/v1/users/alice/profile", headers: [("Cache-Control", "only-if-cached")])
        #expect(warm.status == 200)
        #expect(warm.header("X-Cache") == "HIT")
    }

    @Test func concurrentColdRequestsMakeOneFetch() async throws {
        let h = AppHarness()
        h.fetcher.close()
        let statuses = try await withThrowingTaskGroup(of: String.self) { group in
            for _ in 0..<200 {
                group.addTask { try await h.send(.get, "/v1/users/alice/wellness?days=7").header("X-Cache") ?? "" }
            }
            await h.fetcher.waitForCalls(1)
            h.fetcher.open()
            var all: [String] = []
            for try await status in group { all.append(status) }
            return all
        }
        #expect(h.fetcher.calls.count == 1)
        #expect(statuses.filter { $0 == "MISS" }.count == 1)
        #expect(statuses.filter { $0 == "COALESCED" || $0 == "HIT" }.count == 199)
        let stats = h.app.cache.statistics().requests
        #expect(stats.misses + stats.coalesced + stats.hits == 200)
    }

    @Test func staleIfErrorThen502() async throws {
        let h = AppHarness()
        let fresh = try await h.send(.get, "/v1/users/alice/subscription")
        h.clock.advance(by: 301)
        h.fetcher.set(.fail(.unavailable("upstream status 500")))
        let stale = try await h.send(.get, "/v1/users/alice/subscription")
        #expect(stale.status == 200)
        #expect(stale.header("X-Cache") == "STALE")
        #expect(stale.header("Cache-Status") == "unicache; hit; fwd=stale; detail=upstream-error")
        #expect(stale.body == fresh.body)
        h.clock.advance(by: 24 * 3600)
        let gone = try await h.send(.get, "/v1/users/alice/subscription")
        #expect(gone.status == 502)
        #expect(gone.header("Content-Type") == "application/problem+json")
        #expect(gone.json["status"] as? Int == 502)
    }

    @Test func rateLimitedWithoutCopyIs503WithRetryAfter() async throws {
        let h = AppHarness()
        h.fetcher.set(.fail(.rateLimited(retryAfter: 17)))
        let response = try await h.send(.get, "/v1/users/alice/profile")
        #expect(response.status == 503)
        #expect(response.header("Retry-After") == "17")
    }

    /// A 404 carries the headers of any answer of a resource: fetched (`MISS`, stored), then remembered (`HIT`).
    @Test func notFoundIsRememberedForAMinute() async throws {
        let h = AppHarness()
        h.fetcher.set(.fail(.notFound))
        let fetched = try await h.send(.get, "/v1/users/alice/activities/a1/streams")
        #expect(fetched.status == 404)
        #expect(fetched.header("X-Cache") == "MISS" && fetched.header("Cache-Status") == "unicache; fwd=miss; stored")
        let remembered = try await h.send(.get, "/v1/users/alice/activities/a1/streams")
        #expect(remembered.status == 404)
        #expect(remembered.header("X-Cache") == "HIT" && remembered.header("Cache-Status") == "unicache; hit")
        #expect(remembered.header("X-Cache-Tier") == "memory")
        #expect(h.fetcher.calls.count == 1)
        h.clock.advance(by: 61)
        h.fetcher.set(.answer)
        #expect(try await h.send(.get, "/v1/users/alice/activities/a1/streams").status == 200)
        #expect(h.fetcher.calls.count == 2)
    }

    @Test func noStoreIsServedNotStored() async throws {
        let h = AppHarness()
        h.fetcher.set(.noStore)
        let first = try await h.send(.get, "/v1/users/alice/profile")
        #expect(first.status == 200)
        #expect(first.header("Cache-Status") == "unicache; fwd=miss")
        _ = try await h.send(.get, "/v1/users/alice/profile")
        #expect(h.fetcher.calls.count == 2)
    }

    @Test func healthTodayFromAnotherDayIsNeverServed() async throws {
        let h = AppHarness()
        h.fetcher.set(
            body: #"{"latestSampleTimestamp":"2026-11-21T23:00:00Z"}"#, for: "health:today:alice:2026-11-22")
        _ = try await h.send(.get, "/v1/users/alice/health/today")
        h.fetcher.set(.fail(.timeout))
        let response = try await h.send(.get, "/v1/users/alice/health/today")
        #expect(response.status == 502)
    }

    @Test func healthTodayKeyUsesTheDateInTheZone() async throws {
        let h = AppHarness()
        h.clock.set(ISO8601DateFormatter().date(from: "2026-11-22T23:30:00Z") ?? AppHarness.start)
        _ = try await h.send(.get, "/v1/users/alice/health/today?tz=Europe/Berlin")
        #expect(h.fetcher.calls.first?.key == "health:today:alice:2026-11-23")
        #expect(h.fetcher.calls.first?.query == [QueryItem("tz", "Europe/Berlin")])
    }

    @Test func weekdayNamesAndNumbersShareOneEntry() async throws {
        let h = AppHarness()
        _ = try await h.send(.get, "/v1/users/alice/health/averages/monday")
        let second = try await h.send(.get, "/v1/users/alice/health/averages/2")
        #expect(second.header("X-Cache") == "HIT")
        #expect(h.fetcher.calls.map(\.key) == ["health:avg:alice:2"])
        #expect(h.fetcher.calls.first?.path == "/users/alice/health/averages/2")
    }

    @Test func metricsTTLDependsOnTheDate() async throws {
        let h = AppHarness()
        let today = try await h.send(.get, "/v1/users/alice/health/metrics/hrv/2026-11-22")
        #expect(today.header("Cache-Control") == "private, max-age=300")
        let past = try await h.send(.get, "/v1/users/alice/health/metrics/rhr/2026-11-01")
        #expect(past.header("Cache-Control") == "private, max-age=86400")
    }

    @Test func answeredAnyBecomesPermanent() async throws {
        let h = AppHarness()
        h.fetcher.set(body: #"{"answered":true}"#, for: "progress:any:alice")
        _ = try await h.send(.get, "/v1/users/alice/progress/answered-any")
        h.clock.advance(by: 400 * 86_400)
        #expect(try await h.send(.get, "/v1/users/alice/progress/answered-any").header("X-Cache") == "HIT")
        #expect(h.fetcher.calls.count == 1)
    }

    @Test func ttlOverrideApplies() async throws {
        let h = AppHarness(ttl: ["subscription": .seconds(10)])
        let response = try await h.send(.get, "/v1/users/alice/subscription")
        #expect(response.header("Cache-Control") == "private, max-age=10")
    }

    @Test(arguments: [
        "/v1/users/../subscription", "/v1/users/.../subscription", "/v1/users/a%2Fb/subscription",
        "/v1/users/a%00b/subscription", "/v1/users/alice/wellness?days=0", "/v1/users/alice/wellness?days=abc",
        "/v1/users/alice/wellness?days=91", "/v1/users/alice/activities?days=366",
        "/v1/users/alice/health/averages/9", "/v1/users/alice/health/today?tz=Mars/Base",
        "/v1/users/alice/scores/2026-13-01", "/v1/users/alice/scores/22-11-2026",
        "/v1/users/alice/health/metrics/bpm/2026-11-01", "/v1/users/alice/profile?refresh=maybe",
    ])
    func badInputIs400Problem(target: String) async throws {
        let h = AppHarness()
        let response = try await h.send(.get, target)
        #expect(response.status == 400)
        #expect(response.header("Content-Type") == "application/problem+json")
        #expect(response.json["title"] != nil && response.json["detail"] != nil && response.json["type"] != nil)
        #expect(h.fetcher.calls.isEmpty)
    }

    /// A parameter given twice was read as its first value (`?days=3&days=90` fetched 3 days); which one the client
    /// meant is not the service's to guess: 400, the parameter named, nothing fetched.
    @Test(arguments: [
        ("/v1/users/alice/wellness?days=3&days=90", "days"), ("/v1/users/alice/wellness?days=3&days=3", "days"),
        ("/v1/users/alice/activities?types=run&types=ride", "types"), ("/v1/users/alice/health/today?tz=UTC&tz=UTC", "tz"),
        ("/v1/users/alice/health/summary?tz=Europe/Berlin&tz=UTC", "tz"), ("/v1/users/alice/profile?refresh=true&refresh=false", "refresh"),
    ])
    func aParameterGivenTwiceIs400(target: String, parameter: String) async throws {
        let h = AppHarness()
        let response = try await h.send(.get, target)
        #expect(response.status == 400)
        #expect(response.json["detail"] as? String == "\(parameter) must be given at most once")
        #expect(h.fetcher.calls.isEmpty)
        #expect(try await h.send(.get, "/v1/users/alice/wellness?days=3&other=1&other=2").status == 200)
    }
}
