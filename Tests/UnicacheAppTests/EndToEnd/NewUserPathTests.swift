import Foundation
@testable import Settings
import Testing
import TestSupport
import UnicacheApp

/// CONTRACT §11 through the live service: no invented data by accident, the upstream's own URLs, and user ids
/// from identity providers.
@Suite("A new user's path (CONTRACT §11)", .serialized, .timeLimit(.minutes(2)))
struct NewUserPathTests {
    @Test func aDomainWithoutUpstreamOrDemoAnswers503AndStatsSayWhy() async throws {
        try await withService(LiveService.start(domains: [.health], demo: [.progress])) { live in
            let none = try await live.request(.GET, "/v1/users/alice/subscription")
            let activities = try await live.request(.GET, "/v1/users/alice/activities?days=7")
            let demo = try await live.request(.GET, "/v1/users/alice/profile")
            let real = try await live.request(.GET, "/v1/users/alice/health/metrics/hrv/2026-01-02")
            let stats = try await live.request(.GET, "/stats")
            let cacheRequests = live.app.cache.statistics().requests
            await live.stop()

            for answer in [none, activities] {
                #expect(answer.status == 503)
                #expect(answer.header("Content-Type") == "application/problem+json")
                #expect(answer.body.contains("no-upstream"))
                #expect(answer.body.contains("--upstream"))
            }
            #expect(none.body.contains("--upstream subscription=URL"))
            #expect(demo.status == 200 && demo.header("X-Cache") == "MISS")
            #expect(real.status == 200)
            #expect(live.upstream.requestCount("/users/alice/health/metrics/hrv/2026-01-02") == 1)
            #expect(live.upstream.requestCount("/users/alice/subscription") == 0)
            // The 503s never reached the cache: two misses (the demo's and the upstream's), nothing else.
            #expect(cacheRequests.misses == 2)
            let document = try #require(try JSONSerialization.jsonObject(with: Data(stats.body.utf8)) as? [String: Any])
            let upstreams = try #require(document["upstreams"] as? [String: [String: String]])
            #expect(upstreams["health"]?["source"]?.hasPrefix("http://127.0.0.1:") == true)
            #expect(upstreams["subscription"]?["source"] == "none")
            #expect(upstreams["activities"]?["source"] == "none")
            #expect(upstreams["progress"]?["source"] == "demo")
            #expect(document["version"] as? String == UnicacheVersion.current)
        }
    }

    @Test func aTemplateAsksTheUpstreamsOwnURLWithEncodedValues() async throws {
        let activities = try UpstreamPathTemplate(
            "/api/v3/athletes/{user}/activities?per_page=50&after_days={days}&types={types}",
            available: ["user", "days", "types"])
        try await withService(LiveService.start(domains: [.activities], paths: ["activities": activities])) { live in
            let answer = try await live.request(.GET, "/v1/users/auth0%7C5f7c/activities?types=Run,ride&days=14")
            let again = try await live.request(.GET, "/v1/users/auth0|5f7c/activities?types=ride,run&days=14")
            await live.stop()
            #expect(answer.status == 200 && answer.header("X-Cache") == "MISS")
            #expect(again.status == 200 && again.header("X-Cache") == "HIT")
            #expect(live.upstream.requestTargets == ["/api/v3/athletes/auth0%7C5f7c/activities?per_page=50&after_days=14&types=ride%2Crun"])
        }
    }

    /// Auth0's `auth0|…`, Google's through Auth0 `google-oauth2|…`, an e-mail-shaped id: sent raw or
    /// percent-encoded, one user, percent-encoded in the upstream path.
    @Test func identityProviderUserIdsAreUsers() async throws {
        try await withService(LiveService.start(domains: [.subscription, .progress])) { live in
            let raw = try await live.request(.GET, "/v1/users/google-oauth2|1043/subscription")
            let encoded = try await live.request(.GET, "/v1/users/google-oauth2%7C1043/subscription")
            let email = try await live.request(.GET, "/v1/users/kate@example.com/profile")
            let listing = try await live.request(.GET, "/v1/cache?prefix=subscription:google-oauth2", admin: true)
            let bad = try await live.request(.GET, "/v1/users/kate%20x/profile")
            await live.stop()
            #expect(raw.status == 200 && raw.header("X-Cache") == "MISS")
            #expect(encoded.status == 200 && encoded.header("X-Cache") == "HIT")
            #expect(email.status == 200)
            #expect(listing.body.contains("subscription:google-oauth2|1043"))
            #expect(bad.status == 400)
            #expect(live.upstream.requestCount("/users/google-oauth2%7C1043/subscription") == 1)
            #expect(live.upstream.requestCount("/users/kate%40example.com/profile") == 1)
        }
    }
}
