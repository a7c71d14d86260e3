import Benchmark
import Breaker
import Clocks
import Dispatch
import Foundation
import Logging
import UnifiedCache
import UpstreamGate

/// A fetcher that answers at once with a fixed body, after `yields` suspensions.
private struct InstantFetcher: Fetcher {
    let body: [UInt8]
    let yields: Int
    func fetch(_ request: FetchRequest) async throws(FetchError) -> FetchedValue {
        for _ in 0..<yields { await Task.yield() }
        return FetchedValue(body: body)
    }
}

private func makeCache(entries: Int = 100_000) -> UnifiedCacheManager {
    UnifiedCacheManager(
        configuration: MemoryTierConfiguration(maxBytes: 256 << 20, maxEntries: entries), secondTier: nil,
        clock: SystemWallClock(), ticker: ContinuousClock(),
        logger: Logger(label: "bench", factory: { _ in SwiftLogNoOpLogHandler() }))
}

private func request(_ key: String) -> FetchRequest {
    FetchRequest(key: key, namespace: "bench", user: "alice", path: "/users/alice/\(key)")
}

private let body = [UInt8](repeating: 0x61, count: 2048)
private let policy = FreshnessPolicy.ttl(.seconds(3600))

/// One get of a new cold key per scaled iteration.
private func coldGets(_ benchmark: Benchmark, _ cache: UnifiedCacheManager, _ fetcher: some Fetcher) async {
    let base = Int.random(in: 0..<Int.max / 2)
    for iteration in benchmark.scaledIterations {
        blackHole(try? await cache.get(request("cold:\(base &+ iteration)"), policy: policy, fetcher: fetcher))
    }
}

let benchmarks: @Sendable () -> Void = {
    Benchmark.defaultConfiguration = .init(
        metrics: [.wallClock, .throughput, .mallocCountTotal], maxDuration: .seconds(2), maxIterations: 1_000_000)

    // One synchronous memory hit (the HTTP thread's path), 1,000 per measured iteration.
    Benchmark("sync memory hit, 1 thread", configuration: .init(scalingFactor: .kilo)) {
        (benchmark: Benchmark, cache: UnifiedCacheManager) in
        let hot = request("hot:7")
        for _ in benchmark.scaledIterations {
            blackHole(cache.look(hot, policy: policy, joining: false))
        }
    } setup: {
        let cache = makeCache()
        for index in 0..<100 {
            let fetcher = InstantFetcher(body: body, yields: 0)
            _ = try? await cache.get(request("hot:\(index)"), policy: policy, fetcher: fetcher)
        }
        return cache
    }

    // Two threads hitting the same lock at once, 1,000 hits per thread per measured iteration.
    Benchmark("sync memory hit, 2 threads", configuration: .init(scalingFactor: .kilo)) {
        (benchmark: Benchmark, cache: UnifiedCacheManager) in
        let iterations = benchmark.scaledIterations
        DispatchQueue.concurrentPerform(iterations: 2) { thread in
            let hot = request("hot:\(thread)")
            for _ in iterations {
                blackHole(cache.look(hot, policy: policy, joining: false))
            }
        }
    } setup: {
        let cache = makeCache()
        for index in 0..<100 {
            let fetcher = InstantFetcher(body: body, yields: 0)
            _ = try? await cache.get(request("hot:\(index)"), policy: policy, fetcher: fetcher)
        }
        return cache
    }

    // A cold key: memory miss, in-flight registration, fetch (instant), store.
    Benchmark("miss then store") { (benchmark: Benchmark, cache: UnifiedCacheManager) async in
        await coldGets(benchmark, cache, InstantFetcher(body: body, yields: 0))
    } setup: {
        makeCache(entries: 10_000)
    }

    // The same through an upstream gate with a budget that never runs out: what the gate adds to a miss.
    Benchmark("miss then store, gated") { (benchmark: Benchmark, state: (UnifiedCacheManager, GatedFetcher)) async in
        await coldGets(benchmark, state.0, state.1)
    } setup: {
        let gate = UpstreamGate(
            configuration: .init(concurrency: 64, slotWait: .seconds(5)),
            budget: SlidingWindowCounter(limit: 1 << 40, window: .seconds(1)), clock: ContinuousClock())
        return (makeCache(entries: 10_000), GatedFetcher(InstantFetcher(body: body, yields: 0), gate: gate))
    }

    // A cold key while its domain's circuit is open: answered at once with the refusal, no fetch.
    Benchmark("miss, circuit open") { (benchmark: Benchmark, state: (UnifiedCacheManager, GatedFetcher)) async in
        await coldGets(benchmark, state.0, state.1)
    } setup: {
        var configuration = UpstreamGate.Configuration(slotWait: .seconds(5))
        // Stays open for the whole run.
        configuration.breaker = CircuitBreaker(
            .init(threshold: 5, initialBackoff: .seconds(3600), maximumBackoff: .seconds(3600)))
        let open = UpstreamGate(configuration: configuration, budget: nil, clock: ContinuousClock())
        for _ in 0..<5 { if let pass = try? await open.admit() { open.finish(pass, .failed) } }
        return (makeCache(entries: 10_000), GatedFetcher(InstantFetcher(body: body, yields: 0), gate: open))
    }

    // One user's invalidation (an event's namespaces, as another instance's event arrives) over 100,000 entries of
    // other users: the scan of the memory tier, under its lock, that every such event costs each instance.
    Benchmark("user invalidation over 100,000 entries", configuration: .init(maxIterations: 10_000)) {
        (benchmark: Benchmark, cache: UnifiedCacheManager) async in
        for _ in benchmark.scaledIterations {
            blackHole(try? await cache.invalidate(namespaces: ["bench"], user: "nobody"))
        }
    } setup: {
        let cache = makeCache()
        let fetcher = InstantFetcher(body: [UInt8](repeating: 0x61, count: 64), yields: 0)
        for index in 0..<100_000 {
            let user = "user\(index)"
            let key = FetchRequest(key: "bench:\(user)", namespace: "bench", user: user, path: "/users/\(user)")
            _ = try? await cache.get(key, policy: policy, fetcher: fetcher)
        }
        return cache
    }

    // 1,000 concurrent gets of one cold key: one fetch, 999 coalesced.
    Benchmark("coalesced stampede of 1000", configuration: .init(maxIterations: 2_000)) {
        (benchmark: Benchmark, cache: UnifiedCacheManager) async in
        let fetcher = InstantFetcher(body: body, yields: 50)
        let key = "stampede:\(UUID().uuidString)"
        await withTaskGroup(of: Void.self) { group in
            for _ in 0..<1000 {
                group.addTask { blackHole(try? await cache.get(request(key), policy: policy, fetcher: fetcher)) }
            }
        }
    } setup: {
        makeCache(entries: 10_000)
    }
}
