import Access
import Foundation
import HTTPRouting
@testable import Settings
import Testing

@testable import UnicacheApp

@Suite(.timeLimit(.minutes(10))) struct AdminTests {
    @Test func withoutATokenAdminIsForbiddenAndSaysHowToEnableIt() async throws {
        let h = AppHarness(adminToken: nil)
        let response = try await h.send(.delete, "/v1/users/alice", admin: true)
        #expect(response.status == 403)
        #expect((response.json["detail"] as? String)?.contains("--admin-token") == true)
    }

    @Test func wrongOrMissingTokenIs401WithChallenge() async throws {
        let h = AppHarness()
        let missing = try await h.send(.delete, "/v1/users/alice")
        #expect(missing.status == 401)
        #expect(missing.header("WWW-Authenticate") == #"Bearer realm="unicache""#)
        let wrong = try await h.send(.delete, "/v1/users/alice", headers: [("Authorization", "Bearer nope")])
        #expect(wrong.status == 401)
        #expect(
            wrong.header("WWW-Authenticate")
                == #"Bearer realm="unicache", error="invalid_token", error_description="not the admin token""#)
        #expect(AdminToken.equal(Array("abc".utf8), Array("abc".utf8)))
        #expect(!AdminToken.equal(Array("abc".utf8), Array("abcd".utf8)))
    }

    @Test func questionAnsweredInvalidatesSubscriptionAndProgress() async throws {
        let h = AppHarness()
        for path in ["subscription", "progress/streak", "progress/history", "progress/answered-any", "profile"] {
            _ = try await h.send(.get, "/v1/users/alice/\(path)")
        }
        _ = try await h.send(.get, "/v1/users/bob/subscription")
        let answer = try await h.send(
            .post, "/v1/users/alice/events", body: #"{"type":"question.answered"}"#, admin: true)
        #expect(answer.status == 200)
        #expect(answer.json["invalidated"] as? Int == 4)
        #expect(try await h.send(.get, "/v1/users/alice/subscription").header("X-Cache") == "MISS")
        #expect(try await h.send(.get, "/v1/users/alice/profile").header("X-Cache") == "HIT")
        #expect(try await h.send(.get, "/v1/users/bob/subscription").header("X-Cache") == "HIT")
    }

    @Test(arguments: [
        ("subscription.purchased", "subscription", 1), ("trial.started", "subscription", 1),
        ("activity.created", "activities", 1), ("health.synced", "health/today", 1),
    ])
    func eventRules(type: String, path: String, expected: Int) async throws {
        let h = AppHarness()
        _ = try await h.send(.get, "/v1/users/alice/\(path)")
        let answer = try await h.send(.post, "/v1/users/alice/events", body: #"{"type":"\#(type)"}"#, admin: true)
        #expect(answer.json["invalidated"] as? Int == expected)
    }

    @Test func unknownEventListsTheKnownOnes() async throws {
        let h = AppHarness()
        let answer = try await h.send(.post, "/v1/users/alice/events", body: #"{"type":"nope"}"#, admin: true)
        #expect(answer.status == 400)
        #expect((answer.json["detail"] as? String)?.contains("question.answered") == true)
        #expect((answer.json["detail"] as? String)?.contains(#""nope""#) == true)
        let bad = try await h.send(.post, "/v1/users/alice/events", body: "not json", admin: true)
        #expect(bad.status == 400)
        // A long unknown type is not sent back.
        let long = String(repeating: "x", count: 100_000)
        let huge = try await h.send(.post, "/v1/users/alice/events", body: #"{"type":"\#(long)"}"#, admin: true)
        #expect(huge.status == 400 && huge.body.count < 1_000, "\(huge.body.count)")
    }

    /// An event body that names a member twice has no one reading (RFC 8259 section 4): 400, and nothing is
    /// invalidated, whichever of the two a parser would keep; escaped spellings of one name are one name.
    @Test func anEventThatNamesAMemberTwiceIsRefused() async throws {
        let h = AppHarness()
        _ = try await h.send(.get, "/v1/users/alice/subscription")
        let bodies = [
            #"{"type":"question.answered","type":"nope"}"#, #"{"type":"nope","type":"question.answered"}"#,
            #"{"type":"question.answered","\u0074ype":"question.answered"}"#,
            #"{"type":"question.answered","data":{"id":1,"id":2}}"#,
            #"{"type":"question.answered","data":"# + String(repeating: "[", count: 40) + String(repeating: "]", count: 40) + "}",
        ]
        for body in bodies {
            let answer = try await h.send(.post, "/v1/users/alice/events", body: body, admin: true)
            #expect(answer.status == 400, "\(body)")
            #expect(answer.json["type"] as? String == Problem.typeURI("invalid-body"), "\(body)")
        }
        #expect(try await h.send(.get, "/v1/users/alice/subscription").header("X-Cache") == "HIT")
        // Other members, once each, are no matter.
        let fine = #"{"type":"question.answered","data":{"id":1,"at":"2026-12-04"}}"#
        #expect(try await h.send(.post, "/v1/users/alice/events", body: fine, admin: true).json["invalidated"] as? Int == 1)
    }

    @Test func erasureRemovesOnlyThatUser() async throws {
        let h = AppHarness()
        for user in ["alice", "bob"] {
            _ = try await h.send(.get, "/v1/users/\(user)/subscription")
            _ = try await h.send(.get, "/v1/users/\(user)/activities?types=run")
        }
        let answer = try await h.send(.delete, "/v1/users/alice", admin: true)
        #expect(answer.json["erased"] as? Int == 2)
        #expect(try await h.send(.get, "/v1/users/bob/subscription").header("X-Cache") == "HIT")
        #expect(try await h.send(.get, "/v1/users/alice/subscription").header("X-Cache") == "MISS")
    }

    @Test func warmFetchesSevenWeekdays() async throws {
        let h = AppHarness()
        let answer = try await h.send(.post, "/v1/users/alice/health/averages/warm", admin: true)
        #expect(answer.status == 200)
        let keys = try #require(answer.json["keys"] as? [String])
        #expect(keys == (1...7).map { "health:avg:alice:\($0)" })
        #expect(h.fetcher.calls.count == 7)
        #expect(try await h.send(.get, "/v1/users/alice/health/averages/3").header("X-Cache") == "HIT")
    }

    /// A weekday the upstream has no average for is warmed as its "not found" (remembered, as a read would); one
    /// that fails makes the answer that failure's problem, naming every key that failed and saying the others are
    /// stored. A 404 made the whole warm-up 404 "the upstream has no such resource", and which failure answered
    /// depended on which fetch ended first.
    @Test func warmingKeepsANotFoundWeekdayAndNamesTheFailedOnes() async throws {
        let h = AppHarness()
        h.fetcher.set(failure: .notFound, for: "health:avg:alice:6")
        let warmed = try await h.send(.post, "/v1/users/alice/health/averages/warm", admin: true)
        #expect(warmed.status == 200)
        #expect(warmed.json["keys"] as? [String] == (1...7).map { "health:avg:alice:\($0)" })
        #expect(try await h.send(.get, "/v1/users/alice/health/averages/6").status == 404)
        #expect(h.fetcher.count("health:avg:alice:6") == 1)

        h.fetcher.set(failure: .unavailable("upstream status 500"), for: "health:avg:bob:3")
        h.fetcher.set(failure: .unavailable("upstream status 500"), for: "health:avg:bob:5")
        let failed = try await h.send(.post, "/v1/users/bob/health/averages/warm", admin: true)
        #expect(failed.status == 502)
        #expect(failed.json["failed"] as? [String] == ["health:avg:bob:3", "health:avg:bob:5"])
        let detail = failed.json["detail"] as? String ?? ""
        #expect(detail.hasPrefix("2 of 7 weekdays could not be warmed (health:avg:bob:3, health:avg:bob:5); the others are stored."), "\(detail)")
        #expect(try await h.send(.get, "/v1/users/bob/health/averages/1").header("X-Cache") == "HIT")
    }

    @Test func summaryIsFullWithTodaysDataAndAverageOnlyWithout() async throws {
        let h = AppHarness()
        let full = try await h.send(.get, "/v1/users/alice/health/summary")
        #expect(full.status == 200)
        #expect(full.json["view"] as? String == "full")
        #expect(full.json["asOf"] as? String == "2026-11-22T10:00:00Z")
        #expect(full.json["average"] is [String: Any])

        let other = AppHarness()
        other.fetcher.set(body: #"{"latestSampleTimestamp":null}"#, for: "health:today:alice:2026-11-22")
        let degraded = try await other.send(.get, "/v1/users/alice/health/summary")
        #expect(degraded.json["view"] as? String == "average-only")
    }

    /// A summary is one read-through request, counted once (CONTRACT §5), under `health.summary`, with its combined
    /// outcome; its two parts (a `health.today` and a `health.averages` read) are not counted besides.
    @Test func aSummaryCountsOnceInTheStatistics() async throws {
        let h = AppHarness()
        _ = try await h.send(.get, "/v1/users/alice/health/summary")
        _ = try await h.send(.get, "/v1/users/alice/health/summary")
        let stats = try await h.send(.get, "/stats").json
        let cache = try #require(stats["cache"] as? [String: Any])
        #expect(cache["misses"] as? Int == 1 && cache["hits"] as? Int == 1, "\(cache)")
        let namespaces = try #require(stats["namespaces"] as? [String: [String: Any]])
        #expect(namespaces["health.summary"]?["misses"] as? Int == 1 && namespaces["health.summary"]?["hits"] as? Int == 1)
        for part in ["health.today", "health.averages"] {
            let counted = ["hits", "misses", "coalesced", "stale", "refreshes"].map { namespaces[part]?[$0] as? Int ?? 0 }
            #expect(counted.reduce(0, +) == 0, "\(part): \(namespaces[part] ?? [:])")
        }
        // A part read on its own route is counted there.
        _ = try await h.send(.get, "/v1/users/alice/health/today")
        let after = try await h.send(.get, "/stats").json
        #expect((after["cache"] as? [String: Any])?["hits"] as? Int == 2)
        #expect((after["namespaces"] as? [String: [String: Any]])?["health.today"]?["hits"] as? Int == 1)
    }

    /// A health domain with no source answers its warm-up as its routes: 503 `no-upstream`, nothing fetched.
    @Test func warmingAHealthDomainWithoutASourceIs503NoUpstream() async throws {
        let h = AppHarness(domains: [.activities])
        let warm = try await h.send(.post, "/v1/users/alice/health/averages/warm", admin: true)
        let read = try await h.send(.get, "/v1/users/alice/health/averages/3")
        #expect(warm.status == 503 && read.status == 503)
        #expect(warm.json["type"] as? String == Problem.typeURI("no-upstream"))
        #expect(warm.json["detail"] as? String == read.json["detail"] as? String)
        #expect(h.fetcher.calls.isEmpty)
        #expect(try await h.send(.post, "/v1/users/alice/health/averages/warm").status == 401)
    }
}
