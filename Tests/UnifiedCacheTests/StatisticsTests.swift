import TestSupport
import Testing
@testable import UnifiedCache

@Suite(.timeLimit(.minutes(10))) struct StatisticsTests {
    @Test func percentilesAndHistogram() {
        var latency = LatencyRecorder()
        for ms in 1...100 { latency.record(seconds: Double(ms) / 1000) }
        let stats = latency.statistics()
        #expect(stats.latencyP50Ms == 50)
        #expect(stats.latencyP90Ms == 90)
        #expect(stats.latencyP99Ms == 99)
        // Cumulative counts for le = 5 ms, 10 ms, 25 ms, 50 ms, 100 ms, … , +Inf.
        #expect(Array(stats.latencyBucketCounts.prefix(5)) == [5, 10, 25, 50, 100])
        #expect(stats.latencyBucketCounts.last == 100)
        #expect(stats.latencyBucketCounts.count == stats.latencyBucketBounds.count + 1)
        #expect(abs(stats.latencySumSeconds - 5.05) < 1e-9)
    }

    @Test func reservoirKeepsTheMostRecentFetches() {
        var latency = LatencyRecorder()
        for _ in 0..<LatencyRecorder.reservoirSize { latency.record(seconds: 10) }
        for _ in 0..<LatencyRecorder.reservoirSize { latency.record(seconds: 0.001) }
        #expect(latency.statistics().latencyP99Ms == 1)
        #expect(latency.statistics().latencyBucketCounts.last == 2 * LatencyRecorder.reservoirSize)
    }

    @Test func emptyStatisticsAreZero() {
        let stats = makeManager().statistics()
        #expect(stats.requests.requests == 0 && stats.requests.hitRate == 0)
        #expect(stats.upstream.latencyP50Ms == 0 && stats.secondTier == nil && stats.evictions == 0)
    }

    @Test func perNamespaceCountersAddUpToTheTotals() async throws {
        let cache = makeManager()
        let fetcher = ScriptedFetcher(body: "v")
        _ = try await cache.get(request("a", namespace: "one"), policy: .ttl(.seconds(60)), fetcher: fetcher)
        _ = try await cache.get(request("a", namespace: "one"), policy: .ttl(.seconds(60)), fetcher: fetcher)
        _ = try await cache.get(request("b", namespace: "two"), policy: .ttl(.seconds(60)), fetcher: fetcher)
        let stats = cache.statistics()
        #expect(stats.namespaces["one"]?.hits == 1 && stats.namespaces["one"]?.misses == 1)
        #expect(stats.namespaces["two"]?.misses == 1 && stats.namespaces["two"]?.fetches == 1)
        #expect(stats.requests.requests == 3 && stats.requests.hitRate == 1.0 / 3.0)
    }

    /// A fetch's latency is read from the manager's ticker: a fetch during which it moves 250 ms records 250 ms.
    @Test func aFetchsLatencyIsTheTickersTime() async throws {
        let ticker = ManualClock()
        let cache = makeManager(ticker: ticker)
        _ = try await cache.get(request("a"), policy: .ttl(.seconds(60)), fetcher: TickingFetcher(ticker: ticker))
        let upstream = cache.statistics().upstream
        #expect(upstream.latencySumSeconds == 0.25)
        #expect(upstream.latencyP50Ms == 250)
    }

    @Test func etagIsQuotedAndDependsOnTheBytes() {
        let a = ETag.make(for: bytes("hello"))
        #expect(a.hasPrefix("\"") && a.hasSuffix("\""))
        #expect(a == ETag.make(for: bytes("hello")))
        #expect(a != ETag.make(for: bytes("hellp")))
        #expect(ETag.make(for: []) != ETag.make(for: [0]))
    }
}

/// A fetch that takes `span` of its ticker's time.
private struct TickingFetcher: Fetcher {
    let ticker: ManualClock
    var span = Duration.milliseconds(250)

    func fetch(_ request: FetchRequest) async throws(FetchError) -> FetchedValue {
        ticker.advance(by: span)
        return FetchedValue(body: Array("v".utf8))
    }
}
