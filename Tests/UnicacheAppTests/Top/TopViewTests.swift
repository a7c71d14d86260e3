import Foundation
import Testing

@testable import UnicacheApp

/// `unicache top`'s arithmetic: rates from successive snapshots, percentiles from histogram buckets, and `-` for what
/// a service does not report (yet).
@Suite struct TopViewTests {
    static let metrics = """
        # TYPE unicache_http_requests_total counter
        unicache_http_requests_total{route="/v1/users/{user}/profile",status="200"} 90
        unicache_http_requests_total{route="/stats",status="200"} 1000
        unicache_http_request_duration_seconds_bucket{route="/v1/users/{user}/profile",status="200",le="0.001"} 50
        unicache_http_request_duration_seconds_bucket{route="/v1/users/{user}/profile",status="200",le="0.01"} 90
        unicache_http_request_duration_seconds_bucket{route="/v1/users/{user}/profile",status="200",le="+Inf"} 100
        unicache_http_request_duration_seconds_bucket{route="/stats",status="200",le="0.001"} 0
        unicache_http_request_duration_seconds_bucket{route="/stats",status="200",le="0.01"} 0
        unicache_http_request_duration_seconds_bucket{route="/stats",status="200",le="+Inf"} 1000
        """

    static func snapshot(hits: Int, misses: Int, memoryHits: Int, metrics: String = metrics, at: ContinuousClock.Instant) -> TopSnapshot {
        let stats: [String: Any] = [
            "uptimeSeconds": 61,
            "cache": [
                "hits": hits, "misses": misses, "coalesced": 0, "stale": 0, "refreshes": 0,
                "hitRate": Double(hits) / Double(hits + misses),
                "hitsByTier": ["memory": memoryHits, "disk": hits - memoryHits, "shared": 0],
            ] as [String: Any],
            "shared": ["enabled": false, "connected": false] as [String: Any],
            "upstream": ["domains": ["activities": ["circuit": "open", "budgetRemaining": 7, "inFlight": 1,
                                                    "rejected": ["rate": 2, "paused": 0, "circuit": 5]]]],
        ]
        return TopSnapshot(stats: stats, metrics: MetricsText(metrics), at: at)
    }

    @Test func ratesComeFromTwoSnapshotsAndAbsentFieldsShowADash() {
        let start = ContinuousClock.now
        let first = Self.snapshot(hits: 10, misses: 10, memoryHits: 10, at: start)
        let second = Self.snapshot(hits: 30, misses: 20, memoryHits: 25, at: start + .seconds(2))
        let lines = TopView(url: "http://x:1", previous: first, current: second).lines()
        func row(_ label: String) -> [String] {
            (lines.first { $0.hasPrefix(label) } ?? "").dropFirst(label.count).split(separator: " ").map(String.init)
        }
        #expect(row("read-through") == ["15.0", "50"])       // (50 - 20) / 2 s
        #expect(row("  hit") == ["10.0", "30"])
        #expect(row("hit rate") == ["66.7%", "60.0%"])        // 20 of the interval's 30; 30 of 50 since start
        #expect(row("  memory") == ["50.0%", "50.0%"])        // 15 of 30; 25 of 50
        #expect(row("  disk") == ["16.7%", "10.0%"])
        #expect(row("requests (http)") == ["0.0", "90"])      // /stats left out
        let domain = lines.first { $0.hasPrefix("activities") } ?? ""
        #expect(domain.split(separator: " ") == ["activities", "open", "7", "1", "2/0/5"])
        let shared = lines.first { $0.hasPrefix("shared") } ?? ""
        #expect(shared.contains("enabled no") && shared.contains("endpoint -") && shared.contains("failovers -"))
        #expect(lines.contains { $0.hasPrefix("auth     mode -") })
    }

    @Test func theFirstFrameHasNoRates() {
        let lines = TopView(url: "u", previous: nil, current: Self.snapshot(hits: 1, misses: 1, memoryHits: 1, at: .now)).lines()
        #expect(lines.first { $0.hasPrefix("read-through") }?.split(separator: " ").map(String.init) == ["read-through", "-", "2"])
    }

    @Test func percentilesInterpolateWithinTheirBucketAsPromQLDoes() throws {
        let buckets = MetricsText(Self.metrics).buckets(
            "unicache_http_request_duration_seconds", excluding: [#"route="/stats""#])
        #expect(buckets.map(\.count) == [50, 90, 100])
        // The 50th of 100 observations is the last of the first bucket; the 70th is halfway through the second.
        #expect(try #require(MetricsText.quantile(0.5, of: buckets, since: nil)) == 0.001)
        #expect(abs(try #require(MetricsText.quantile(0.7, of: buckets, since: nil)) - 0.0055) < 1e-12)
        // Between two scrapes only the new observations count: 10 more, all in the second bucket.
        let later = buckets.map { (bound: $0.bound, count: $0.count + ($0.bound > 0.001 ? 10 : 0)) }
        let p50 = try #require(MetricsText.quantile(0.5, of: later, since: buckets))
        #expect(abs(p50 - 0.0055) < 1e-12)
        #expect(MetricsText.quantile(0.5, of: buckets, since: buckets) == nil)
    }
}
