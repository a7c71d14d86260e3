import Clocks
import Foundation
import Logging
import NIOConcurrencyHelpers
import Redis
import RedisTestSupport
import TestSupport
import Testing
import UnifiedCache

@testable import RedisTier

/// One instance's shared tier as the cache manager drives it: the events it delivers are recorded, and the
/// "settled" step (the manager's disk flush) can be held, to stand for an instance that dies mid-way.
final class TierInstance: Sendable {
    let tier: RedisSharedTier
    private let recorded = NIOLockedValueBox<[SharedTierEvent]>([])
    private let settling = NIOLockedValueBox(Settling())
    /// The tier's `run`, as the service that owns it runs it.
    private let running = NIOLockedValueBox<Task<Void, Never>?>(nil)

    /// Settles pass until `holdSettles(after:)`; then the ones past the limit wait until `releaseSettles()`.
    private struct Settling {
        var passed = 0
        var limit = Int.max
        var held: [CheckedContinuation<Void, Never>] = []
    }

    convenience init(
        _ redis: RedisServerProcess, prefix: String, checkpointFile: String? = nil, logLength: Int = 100_000,
        catchUpBatch: Int = 1_000
    ) {
        self.init(
            endpoint: redis.endpoint, prefix: prefix, checkpointFile: checkpointFile, logLength: logLength,
            catchUpBatch: catchUpBatch)
    }

    /// An instance of the fleet at `endpoint` (a cluster's seed with `Target.cluster`), its values sealed by `codec`,
    /// its wall clock `clock` and monotonic one `ticker`, its lines logged to `logger`; on a cluster its slot map read
    /// every `clusterMapRefresh`.
    init(
        endpoint: RedisEndpoint, prefix: String, checkpointFile: String? = nil, logLength: Int = 100_000,
        catchUpBatch: Int = 1_000, codec: EntryCodec = EntryCodec(), clock: any WallClock = SystemWallClock(),
        ticker: any Clock<Duration> = ContinuousClock(), logger: Logger = Logger(label: "redis-tier-test"),
        clusterMapRefresh: Duration = .seconds(60)
    ) {
        var configuration = RedisTierConfiguration(
            endpoint: endpoint, timeout: .seconds(1), prefix: prefix, logLength: logLength,
            catchUpBatch: catchUpBatch, checkpointFile: checkpointFile, checkpointInterval: .seconds(3600))
        configuration.clusterMapRefresh = clusterMapRefresh
        tier = RedisSharedTier(configuration: configuration, codec: codec, clock: clock, ticker: ticker, logger: logger)
    }

    var events: [SharedTierEvent] { recorded.withLockedValue { $0 } }
    var statistics: SharedTierStatistics { tier.statistics() }
    var heldSettles: Int { settling.withLockedValue { $0.held.count } }

    func start() {
        tier.start(
            events: { [recorded] event in recorded.withLockedValue { $0.append(event) } },
            settled: { [settling] in
                await withCheckedContinuation { continuation in
                    let pass = settling.withLockedValue { state -> Bool in
                        guard state.passed < state.limit else {
                            state.held.append(continuation)
                            return false
                        }
                        state.passed += 1
                        return true
                    }
                    if pass { continuation.resume() }
                }
            })
        let tier = self.tier
        running.withLockedValue { $0 = Task { await tier.run() } }
    }

    /// From now on, settles past the `count`-th (counted from the start) wait.
    func holdSettles(after count: Int) {
        settling.withLockedValue { $0.limit = count }
    }

    func releaseSettles() {
        let held = settling.withLockedValue { state in
            state.limit = .max
            defer { state.held = [] }
            return state.held
        }
        for continuation in held { continuation.resume() }
    }

    /// Started, and in step with the fleet (caught up or reset).
    func startConnected() async throws {
        start()
        await waitUntil("the tier is in step") { self.statistics.connected }
    }

    /// As the service stops: the fleet's changes so far applied (bounded), then `run` cancelled.
    func stop() async {
        releaseSettles()
        await tier.catchUpBeforeStop()
        let task = running.withLockedValue { $0 }
        task?.cancel()
        await task?.value
    }

    /// An instance that ran until in step, then stopped (its checkpoint saved): a service's run before a restart.
    static func ranOnce(
        _ redis: RedisServerProcess, prefix: String, checkpointFile: String, logLength: Int = 100_000
    ) async throws -> TierInstance {
        let instance = TierInstance(redis, prefix: prefix, checkpointFile: checkpointFile, logLength: logLength)
        try await instance.startConnected()
        await instance.stop()
        return instance
    }
}

/// The ids of the log's entries, oldest first.
func logPositions(_ redis: RedisServerProcess, prefix: String) async throws -> [LogPosition] {
    let reply = try await redisCommand(redis, "XRANGE", prefix + "#log", "-", "+")
    return (RedisSharedTier.logEntries(reply) ?? []).map(\.position)
}

extension TemporaryFolder {
    /// A fresh folder for a test's checkpoint file (and what Redis saves), to `remove()` when the test ends.
    static func forCheckpoint() throws -> TemporaryFolder { try TemporaryFolder("redis-tier") }

    /// The path of the checkpoint file in the folder.
    var checkpointFile: String { file("fleet-log-position") }
}
