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

/// CONTRACT §10.4 with a real redis-server: a fleet miss (memory, disk and Redis all missing) reaches the upstream
/// after one round trip (the look-up and the fill claim are one script), and its value is stored with the lease
/// given back in the same step.
@Suite(.serialized, .timeLimit(.minutes(2))) struct FleetMissTests {
    /// Redis commands the tier sent so far for entries and leases (every command is one round trip, counted by
    /// operation and result), without the fleet membership's announcements, which go on every second.
    private static func sent(_ instance: TierInstance) -> [SharedTierStatistics.Operation: Int] {
        instance.statistics.operations.filter { $0.key.operation != "announce" }
    }

    /// Two instances of one fleet (one prefix) on `redis`, in step.
    private static func twoInstances(_ redis: RedisServerProcess) async throws -> (TierInstance, TierInstance) {
        let prefix = "m\(UInt32.random(in: 0...UInt32.max)):"
        let (first, second) = (TierInstance(redis, prefix: prefix), TierInstance(redis, prefix: prefix))
        try await first.startConnected()
        try await second.startConnected()
        return (first, second)
    }

    /// A cache on `instance`'s shared tier, memory only.
    private static func manager(_ instance: TierInstance) -> UnifiedCacheManager {
        UnifiedCacheManager(
            configuration: MemoryTierConfiguration(), secondTier: nil, sharedTier: instance.tier,
            clock: SystemWallClock(), ticker: ContinuousClock(), logger: Logger(label: "fleet-miss-test"))
    }

    @Test func aFleetMissIsOneRoundTripBeforeTheUpstreamAndOneAfter() async throws {
        let redis = try await RedisServerProcess.start()
        let prefix = "m\(UInt32.random(in: 0...UInt32.max)):"
        let instance = TierInstance(redis, prefix: prefix)
        try await instance.startConnected()
        let cache = UnifiedCacheManager(
            configuration: MemoryTierConfiguration(), secondTier: nil, sharedTier: instance.tier,
            clock: SystemWallClock(), ticker: ContinuousClock(), logger: Logger(label: "fleet-miss-test"))
        let fetcher = SnapshotFetcher { Self.sent(instance) }
        // Redis learns the scripts on their first use (NOSCRIPT, then the text): a first miss teaches it.
        _ = try await cache.get(request("warm-up"), policy: .ttl(.seconds(60)), fetcher: fetcher)

        let before = Self.sent(instance)
        let result = try await cache.get(request("k"), policy: .ttl(.seconds(60)), fetcher: fetcher)
        let atFetch = try #require(fetcher.snapshots.last)
        let after = Self.sent(instance)
        let lease = try await redisCommand(redis, "EXISTS", instance.tier.keys.lock("k"))
        let stored = try await redisCommand(redis, "EXISTS", instance.tier.keys.entry("k"))
        await instance.stop()
        await redis.stop()

        #expect(result.outcome == .miss)
        #expect(difference(atFetch, before) == [.init("lookup", "ok"): 1])
        #expect(difference(after, before) == [.init("lookup", "ok"): 1, .init("store", "ok"): 1])
        #expect(lease == .integer(0), "the store script gave the lease back")
        #expect(stored == .integer(1))
    }

    /// A value stored by another instance is found by the same one round trip, and no lease is taken for it.
    @Test func aSharedHitTakesNoLease() async throws {
        let redis = try await RedisServerProcess.start()
        let (writer, reader) = try await Self.twoInstances(redis)
        let writing = Self.manager(writer)
        let reading = Self.manager(reader)
        let fetcher = SnapshotFetcher { [:] }
        _ = try await writing.get(request("k"), policy: .ttl(.seconds(60)), fetcher: fetcher)

        let before = Self.sent(reader)
        let result = try await reading.get(request("k"), policy: .ttl(.seconds(60)), fetcher: fetcher)
        let after = Self.sent(reader)
        await writer.stop()
        await reader.stop()
        await redis.stop()

        #expect(result.outcome == .hit && result.tier == .shared)
        #expect(fetcher.snapshots.count == 1, "only the writer fetched")
        // The script may be new to this instance's connection only in name: Redis knows it from the writer.
        #expect(difference(after, before) == [.init("lookup", "ok"): 1])
    }

    /// CONTRACT §6.4: the other instances hear of a fetched value as a replacement (their loads in flight for the key
    /// still store: a refresh there must reach the fleet too), and of a raw put as an invalidation (a put supersedes
    /// loads in flight, as it does on the instance that took it).
    @Test func aFetchedValueIsAnnouncedAsAReplacementAndARawPutAsAnInvalidation() async throws {
        let redis = try await RedisServerProcess.start()
        let (writer, reader) = try await Self.twoInstances(redis)
        let writing = Self.manager(writer)
        _ = try await writing.get(request("fetched"), policy: .ttl(.seconds(60)), fetcher: SnapshotFetcher { [:] })
        _ = try await writing.get(request("fetched"), policy: .ttl(.seconds(60)), fetcher: SnapshotFetcher { [:] }, control: .refresh)
        _ = try await writing.put(key: "raw", body: Array("v".utf8), ttl: .seconds(60))
        await waitUntil("all three changes reach the other instance") { reader.events.filter { $0 != .reset }.count >= 3 }
        await writer.stop()
        await reader.stop()
        await redis.stop()

        let changes = reader.events.filter { $0 != .reset }
        #expect(changes == [.replaced("fetched"), .replaced("fetched"), .invalidate(.key("raw"))])
    }
}

private func request(_ key: String) -> FetchRequest {
    FetchRequest(key: key, namespace: "subscription", user: "alice", path: "/users/alice/subscription")
}

private func difference(
    _ later: [SharedTierStatistics.Operation: Int], _ earlier: [SharedTierStatistics.Operation: Int]
) -> [SharedTierStatistics.Operation: Int] {
    later.merging(earlier.mapValues { -$0 }, uniquingKeysWith: +).filter { $0.value != 0 }
}

/// An upstream that answers at once, noting what `snapshot` says at the moment it is asked.
private final class SnapshotFetcher: Fetcher {
    private let snapshot: @Sendable () -> [SharedTierStatistics.Operation: Int]
    private let taken = NIOLockedValueBox<[[SharedTierStatistics.Operation: Int]]>([])

    init(_ snapshot: @escaping @Sendable () -> [SharedTierStatistics.Operation: Int]) {
        self.snapshot = snapshot
    }

    var snapshots: [[SharedTierStatistics.Operation: Int]] { taken.withLockedValue { $0 } }

    func fetch(_ request: FetchRequest) async throws(FetchError) -> FetchedValue {
        let now = snapshot()
        taken.withLockedValue { $0.append(now) }
        return FetchedValue(body: Array("{\"plan\":\"pro\"}".utf8))
    }
}
