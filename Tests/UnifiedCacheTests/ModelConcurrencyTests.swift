import Foundation
import Logging
import SeededRandom
import Testing
import TestSupport
@testable import UnifiedCache

/// Answers at once after one suspension, so concurrent operations interleave inside the load.
private struct YieldingFetcher: Fetcher {
    func fetch(_ request: FetchRequest) async throws(FetchError) -> FetchedValue {
        await Task.yield()
        return FetchedValue(body: ModelOperation.fetchedBody(request.key))
    }
}

@Suite(.timeLimit(.minutes(10))) struct ModelConcurrencyTests {
    static let histories = 10_000
    static let keys = ["1", "2", "3", "4", "5"]

    /// Budgets small enough that histories evict by count and by bytes.
    static let configuration = MemoryTierConfiguration(maxBytes: 900, maxEntries: 3)

    static func randomOperation(_ rng: inout SplitMix64) -> ModelOperation {
        let key = keys.randomElement(using: &rng) ?? "1"
        switch Int.random(in: 0..<10, using: &rng) {
        case 0..<5: return .get(key)
        case 5..<8: return .put(key, size: Int.random(in: 0...300, using: &rng))
        default: return .invalidate(key)
        }
    }

    static func run(_ operation: ModelOperation, on cache: UnifiedCacheManager) async -> ModelResult {
        switch operation {
        case .get(let key):
            let request = FetchRequest(key: key, namespace: "test", user: "alice", path: "/\(key)")
            let result = try? await cache.get(request, policy: .ttl(.seconds(3600)), fetcher: YieldingFetcher())
            return .body(result?.entry.body ?? [])
        case .put(let key, let size):
            // The dictionary tier never refuses a write: a put that threw would read as `false` and fail the model check.
            return .flag((try? await cache.put(key: key, body: ModelOperation.putBody(key, size: size), ttl: .seconds(3600)))?.created ?? false)
        case .invalidate(let key):
            return .flag((try? await cache.invalidate(key: key)) ?? false)
        }
    }

    static func budgetsHold(_ cache: UnifiedCacheManager) -> Bool {
        let memory = cache.statistics().memory
        return memory.bytes <= configuration.maxBytes && memory.entries <= configuration.maxEntries
    }

    @Test func randomHistoriesAreLinearizable() async {
        var rng = SplitMix64(seed: 0x5EED_CAFE)
        var failures: [String] = []
        for history in 0..<Self.histories {
            let cache = UnifiedCacheManager(
                configuration: Self.configuration, secondTier: nil,
                clock: ManualWallClock(Date(timeIntervalSince1970: 1_000_000)), ticker: ManualClock(),
                logger: quietLogger())
            var model = SequentialCacheModel(configuration: Self.configuration)
            // A sequential prefix builds an interesting starting state.
            for _ in 0..<Int.random(in: 0...4, using: &rng) {
                let operation = Self.randomOperation(&rng)
                let observed = await Self.run(operation, on: cache)
                let expected = model.apply(operation)
                if observed != expected { failures.append("history \(history): prefix \(operation) diverged") }
            }
            let plans: [[ModelOperation]] = (0..<Int.random(in: 2...4, using: &rng)).map { _ in
                (0..<Int.random(in: 1...2, using: &rng)).map { _ in Self.randomOperation(&rng) }
            }
            let (observed, budgetViolations) = await withTaskGroup(
                of: (Int, [(ModelOperation, ModelResult)], Int).self
            ) { group in
                for (index, plan) in plans.enumerated() {
                    group.addTask {
                        var results: [(ModelOperation, ModelResult)] = []
                        var violations = 0
                        for operation in plan {
                            results.append((operation, await Self.run(operation, on: cache)))
                            if !Self.budgetsHold(cache) { violations += 1 }
                        }
                        return (index, results, violations)
                    }
                }
                var byTask = [[(ModelOperation, ModelResult)]](repeating: [], count: plans.count)
                var violations = 0
                for await (index, results, count) in group {
                    byTask[index] = results
                    violations += count
                }
                return (byTask, violations)
            }
            let final = await cache.list(prefix: "", limit: 100)
            let memoryNow = cache.statistics().memory
            let finalBodies: [(String, [UInt8])] = cache.memory.list(prefix: "").compactMap { metadata in
                cache.memory.peek(metadata.key).map { (metadata.key, $0.body) }
            }
            let accounted = finalBodies.reduce(0) { total, pair in
                total + (cache.memory.peek(pair.0).map(MemoryTier.cost(of:)) ?? 0)
            }
            if budgetViolations > 0 || !Self.budgetsHold(cache) {
                failures.append("history \(history): budget exceeded")
            }
            if accounted != memoryNow.bytes || final.count != memoryNow.entries {
                failures.append("history \(history): byte accounting \(accounted) != \(memoryNow.bytes)")
            }
            if !SequentialCacheModel.explains(start: model, tasks: observed, final: finalBodies) {
                failures.append("history \(history): \(plans) → \(observed.map { $0.map(\.1) }) not linearizable")
            }
            if failures.count > 5 { break }
        }
        #expect(failures.isEmpty, "\(failures.joined(separator: "\n"))")
    }
}
