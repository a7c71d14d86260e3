import Foundation
import Testing

@testable import Tools

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

    static func snapshot(hits: Int, misses: Int, memoryHits: Int, metrics: String = metrics, at: Duration) -> TopSnapshot {
        let stats: [String: Any] = [
            "uptimeSeconds": 61,
            "cache": [
                "hits": hits, "misses": misses, "coalesced": 0, "stale": 0, "refreshes": 0,
                "hitRate": Double(hits) / Double(hits + misses),
                "hitsByTier": ["memory": memoryHits, "disk": hits - memoryHits, "shared": 0],
            ] as [String: Any],
            "shared": ["enabled": false, "connected": false] as [String: Any],
            "upstream": ["domains": ["activities": ["circuit": "open", "budgetRemaining": 7, "inFlight": 1,
                                                    "rejected": ["rate": 2, "paused": 0, "circuit": 5, "user": 3]]]],
        ]
        return TopSnapshot(stats: stats, metrics: MetricsText(metrics), at: at)
    }

    @Test func ratesComeFromTwoSnapshotsAndAbsentFieldsShowADash() {
        let start = Duration.seconds(100)
        let first = Self.snapshot(hits: 10, misses: 10, memoryHits: 10, at: start)
        let second = Self.snapshot(hits: 30, misses: 20, memoryHits: 25, at: start + .seconds(2))
        let lines = TopView(url: "http://x:1", previous: first, current: second).lines()
        func row(_ label: String) -> [String] {
            (lines.first { $0.hasPrefix(label) } ?? "").dropFirst(label.count).split(separator: " ").map(String.init)
        }
        #expect(row("read-through") == ["15.0", "50"])       // (50 - 20) / 2 s
        #expect(row("  hit") == ["10.0", "30"])
        #expect(row("hit rate") == ["66.7%", "60.0%"])        // 20 of the interval's 30; 30 of 50 since start
        // memory 15 of 30, disk 5 of 30, shared 0 in the interval; 25, 5 and 0 of 50 since start.
        #expect(row("  memory/disk/shared") == ["50.0/16.7/0.0%", "50.0/10.0/0.0%"])
        #expect(row("requests (http)") == ["0.0", "90"])      // /stats left out
        let domain = lines.first { $0.hasPrefix("activities") } ?? ""
        #expect(domain.split(separator: " ") == ["activities", "open", "7", "1", "2/0/5/3"])
        let shared = lines.drop { !$0.hasPrefix("shared") }.prefix(2).joined(separator: "\n")
        #expect(shared.hasPrefix("shared   off") && shared.contains("endpoint -") && shared.contains("failovers -"))
        #expect(lines.contains { $0.hasPrefix("auth     mode -") })
    }

    /// A service with everything to show (four upstreams, the shared tier, JWT access, big counters, a long URL and
    /// endpoint): the frame fits an 80×24 terminal, and nothing in it is cut.
    @Test func aFullFrameFitsAnEightyByTwentyFourTerminal() {
        let big = 123_456_789
        let domain: [String: Any] = [
            "circuit": "half-open", "budgetRemaining": big, "inFlight": 64,
            "rejected": ["rate": big, "paused": big, "circuit": big, "user": big],
        ]
        let stats: [String: Any] = [
            "version": "0.5.0", "uptimeSeconds": 3_599_999,
            "cache": [
                "hits": big, "misses": big, "coalesced": big, "stale": big, "refreshes": big, "hitRate": 0.999,
                "hitsByTier": ["memory": big, "disk": big, "shared": big],
            ] as [String: Any],
            "upstream": [
                "fetches": big, "failures": big, "latencyMs": ["p50": 1234.56, "p99": 99999.99],
                "domains": ["health": domain, "activities": domain, "subscription": domain, "progress": domain],
            ] as [String: Any],
            "shared": [
                "enabled": true, "connected": true, "endpoint": "redis-primary-0.redis.cache.internal.example:6379",
                "failovers": big, "hits": big, "misses": big, "errors": big,
            ] as [String: Any],
            "auth": [
                "mode": "protected", "allowed": big, "keys": big, "keyErrors": big,
                "denied": ["missing": big, "invalid": big, "expired": big, "forbidden": big, "protected": big],
            ] as [String: Any],
            "memory": ["bytes": 1_073_741_000, "limitBytes": 1_073_741_824, "entries": big, "evictions": big],
            "disk": [
                "bytes": 999_999_999_999, "limitBytes": 1_099_511_627_776, "entries": big, "evictions": big,
                "writeErrors": big, "undecryptable": big,
            ],
        ]
        let start = Duration.seconds(100)
        let first = TopSnapshot(stats: stats, metrics: MetricsText(Self.metrics), at: start)
        let second = TopSnapshot(stats: stats, metrics: MetricsText(Self.metrics), at: start + .milliseconds(1))
        let lines = TopView(url: "http://unicache-instance-7.internal:8080", previous: first, current: second).lines()
        #expect(lines.count <= 24, "\(lines.count) lines")
        for line in lines { #expect(line.count <= 80, "\(line.count) columns: \(line)") }
        #expect(!lines.contains { $0.contains("…") }, "\(lines.joined(separator: "\n"))")
        for figure in ["health", "progress", "redis-primary-0.redis.cache.internal.example:6379", "protected 123M",
                       "errors 246M", "latency p50 / p99", "shared   connected", "up 999h59m59s"] {
            #expect(lines.contains { $0.contains(figure) }, "\(figure)")
        }
    }

    /// On a Redis Cluster the shared line shows the nodes and the slots they cover, every slot counted (a cluster one
    /// slot short is not whole), in place of Sentinel failovers, which a cluster never has; the frame still fits.
    @Test func aClusterShowsItsNodesAndCoveredSlots() {
        let big = 123_456_789
        func lines(cluster: [String: Any]?) -> [String] {
            var shared: [String: Any] = [
                "enabled": true, "connected": true, "endpoint": "10.0.0.7:7001", "failovers": 0,
                "hits": big, "misses": big, "errors": big,
            ]
            shared["cluster"] = cluster
            let snapshot = TopSnapshot(stats: ["shared": shared], metrics: MetricsText(""), at: .zero)
            return TopView(url: "http://x:1", previous: nil, current: snapshot).lines()
        }
        let whole = lines(cluster: ["nodes": 6, "slotsCovered": 16384, "moved": 0, "ask": 0, "mapRefreshes": 2])
        let line = whole.first { $0.hasPrefix("shared") } ?? ""
        #expect(line.hasSuffix("errors 123M  nodes 6  slots 16384") && line.count <= TopView.width, "\(line)")
        let short = lines(cluster: ["nodes": 5, "slotsCovered": 16383, "moved": 0, "ask": 0, "mapRefreshes": 3])
        #expect(short.contains { $0.hasSuffix("nodes 5  slots 16383") }, "\(short)")
        let single = lines(cluster: nil)
        #expect(single.contains { $0.hasPrefix("shared") && $0.hasSuffix("failovers 0") }, "\(single)")
        #expect(!single.contains { $0.contains("slots") })
    }

    @Test func longerLinesAreCutToTheTerminal() {
        let lines = TopView.fit((0..<30).map { String(repeating: "x", count: $0 * 5) })
        #expect(lines.count == 24)
        #expect(lines.allSatisfy { $0.count <= 80 })
        #expect(lines[23] == String(repeating: "x", count: 79) + "…")
    }

    /// `unicache top` tells a unicache `/stats` from anything else that answers JSON.
    @Test func onlyAUnicacheStatsDocumentIsOne() {
        #expect(Self.snapshot(hits: 1, misses: 1, memoryHits: 1, at: .zero).isUnicacheStats)
        #expect(TopSnapshot(statsJSON: Array(#"{"path":"/stats","request":1}"#.utf8), metricsText: "", at: .zero)?.isUnicacheStats == false)
        #expect(TopSnapshot(statsJSON: Array("<html></html>".utf8), metricsText: "", at: .zero) == nil)
    }

    @Test func theFirstFrameHasNoRates() {
        let lines = TopView(url: "u", previous: nil, current: Self.snapshot(hits: 1, misses: 1, memoryHits: 1, at: .zero)).lines()
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
