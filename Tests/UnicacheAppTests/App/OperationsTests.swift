import Foundation
import HTTPRouting
@testable import Settings
import Testing

@testable import UnicacheApp

@Suite(.timeLimit(.minutes(10))) struct OperationsTests {
    @Test func healthAndReadiness() async throws {
        let h = AppHarness()
        #expect(try h.isImmediate("/healthz"))
        #expect(try await h.send(.get, "/healthz").json["status"] as? String == "ok")
        #expect(try await h.send(.get, "/readyz").status == 200)
    }

    @Test func statsCountEveryRequestOnceInExactlyOneBucket() async throws {
        let h = AppHarness()
        _ = try await h.send(.get, "/v1/users/alice/subscription")  // miss
        _ = try await h.send(.get, "/v1/users/alice/subscription")  // hit
        _ = try await h.send(.get, "/v1/users/alice/subscription?refresh=true")  // refresh
        h.clock.advance(by: 301)
        h.fetcher.set(.fail(.timeout))
        _ = try await h.send(.get, "/v1/users/alice/subscription")  // stale
        _ = try await h.send(.get, "/v1/users/alice/profile", headers: [("Cache-Control", "only-if-cached")])  // none

        let stats = try await h.send(.get, "/stats")
        #expect(stats.header("Content-Type") == "application/json")
        let cache = try #require(stats.json["cache"] as? [String: Any])
        #expect(cache["hits"] as? Int == 1)
        #expect(cache["misses"] as? Int == 1)
        #expect(cache["refreshes"] as? Int == 1)
        #expect(cache["stale"] as? Int == 1)
        #expect(cache["coalesced"] as? Int == 0)
        #expect(cache["hitRate"] as? Double == 0.25)
        let namespaces = try #require(stats.json["namespaces"] as? [String: [String: Any]])
        #expect(namespaces["subscription"]?["misses"] as? Int == 1)
        let upstream = try #require(stats.json["upstream"] as? [String: Any])
        #expect(upstream["fetches"] as? Int == h.fetcher.calls.count)
        for section in ["memory", "disk"] { #expect(stats.json[section] is [String: Any]) }
    }

    @Test func prometheusWhenTheScrapeAsksForIt() async throws {
        let h = AppHarness()
        _ = try await h.send(.get, "/v1/users/alice/subscription")
        let scrape = try await h.send(
            .get, "/stats",
            headers: [("Accept", "application/openmetrics-text;version=1.0.0,text/plain;version=0.0.4;q=0.5,*/*;q=0.1")])
        #expect(scrape.header("Content-Type")?.hasPrefix("text/plain; version=0.0.4") == true)
        #expect(scrape.text.contains(#"unicache_cache_requests_total{namespace="subscription",result="miss"} 1"#))
        #expect(scrape.text.contains("unicache_upstream_fetch_seconds_bucket"))
        let metrics = try await h.send(.get, "/metrics")
        #expect(metrics.text.contains("unicache_http_requests_total"))
        let json = try await h.send(.get, "/stats", headers: [("Accept", "*/*")])
        #expect(json.header("Content-Type") == "application/json")
        // The answer depends on Accept, and says so (a cache in front keeps the two forms apart).
        #expect(json.header("Vary") == "Accept" && scrape.header("Vary") == "Accept")
        #expect(metrics.header("Vary") == nil)
    }

    /// Each route template and status has its own counter and histogram, told apart by both; a template made apart
    /// from the one first recorded (another string of the same bytes) is the same route.
    @Test func httpRequestsAreCountedByRouteAndStatus() {
        let metrics = ServiceMetrics()
        let cache = "/v1/cache/{key}"
        for _ in 0..<3 { metrics.recordRequest(route: cache, status: 200, duration: .milliseconds(2)) }
        metrics.recordRequest(route: String(cache.utf8.dropLast(5))! + "{key}", status: 200, duration: .milliseconds(2))
        metrics.recordRequest(route: cache, status: 404, duration: .milliseconds(20))
        metrics.recordRequest(route: "/v1/cache/{kez}", status: 200, duration: .seconds(3))
        let text = String(decoding: metrics.exposition(AppHarness().app.cache.statistics()), as: UTF8.self)
        #expect(text.contains(#"unicache_http_requests_total{route="/v1/cache/{key}",status="200"} 4"#))
        #expect(text.contains(#"unicache_http_requests_total{route="/v1/cache/{key}",status="404"} 1"#))
        #expect(text.contains(#"unicache_http_requests_total{route="/v1/cache/{kez}",status="200"} 1"#))
        #expect(text.contains(#"unicache_http_request_duration_seconds_bucket{route="/v1/cache/{key}",status="404",le="0.025"} 1"#))
        #expect(text.contains(#"unicache_http_request_duration_seconds_bucket{route="/v1/cache/{kez}",status="200",le="2.5"} 0"#))
    }

    @Test func openAPIDocumentIsServedAndMatchesTheRepositoryFile() async throws {
        let h = AppHarness()
        let response = try await h.send(.get, "/openapi.yaml")
        #expect(response.status == 200)
        let file = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent().appendingPathComponent("openapi.yaml")
        let onDisk = try String(contentsOf: file, encoding: .utf8)
        #expect(response.text == onDisk, "run scripts/embed-openapi.sh after editing openapi.yaml")
    }

    @Test func unknownRouteIs404AndOtherMethodIs405() async throws {
        let h = AppHarness()
        let missing = try await h.send(.get, "/nope")
        #expect(missing.status == 404)
        #expect(missing.header("Content-Type") == "application/problem+json")
        let method = try await h.send(.post, "/v1/users/alice/subscription")
        #expect(method.status == 405)
        #expect(method.header("Allow")?.contains("GET") == true)
    }
}
