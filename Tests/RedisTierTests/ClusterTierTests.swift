import Foundation
import Redis
import RedisTestSupport
import Sealing
import TestSupport
import Testing
import UnifiedCache
import UpstreamGate

@testable import RedisTier

/// The shared tier on a real six-node Redis Cluster (CONTRACT §13): fleet budgets, rekey across every primary, a
/// shard's lost log resetting that shard's keys only, and the sharded channels.
@Suite(.serialized, .timeLimit(.minutes(3))) struct ClusterTierTests {
    static func seed(_ cluster: RedisTestCluster) throws -> RedisEndpoint {
        try RedisEndpoint(url: "redis://127.0.0.1:\(cluster.nodes[0].port)", cluster: true)
    }

    static func prefix() -> String { "ct\(UInt32.random(in: 0...UInt32.max)):" }

    static func entry(_ key: String, user: String? = nil) -> CacheEntry {
        let now = Date()
        return CacheEntry(
            key: key, namespace: "raw", user: user, body: Array("{}".utf8), contentType: "application/json",
            etag: "\"e\"", storedAt: now, expiresAt: now + 3600, staleUntil: now + 3600)
    }

    /// §13.2 with §6.3: a domain's budget is counted for the whole fleet on a cluster (its keys in one slot).
    @Test func aFleetBudgetHoldsAcrossInstances() async throws {
        try await withService(RedisTestCluster.start()) { cluster in
            let prefix = Self.prefix()
            let instances = [
                TierInstance(endpoint: try Self.seed(cluster), prefix: prefix),
                TierInstance(endpoint: try Self.seed(cluster), prefix: prefix),
            ]
            for instance in instances { try await instance.startConnected() }
            let counters = instances.map {
                FleetRateCounter(
                    domain: "subscription", windows: [RateWindow(limit: 5, window: .seconds(60))],
                    commands: $0.tier.commands, membership: $0.tier.membership)
            }
            var decisions: [RateDecision] = []
            for index in 0..<12 { decisions.append(await counters[index % 2].take(at: .zero, background: false)) }
            let rateCalls = instances.map { $0.statistics.operations[.init("rate", "ok"), default: 0] }
            for instance in instances { await instance.stop() }
            #expect(decisions.filter { $0 == .granted }.count == 5)
            #expect(decisions.prefix(5).allSatisfy { $0 == .granted })
            #expect(rateCalls == [6, 6])
        }
    }

    /// §9.3 on a cluster: rekey finds the plaintext values on every primary and seals each.
    @Test func rekeySealsEveryShardsValues() async throws {
        try await withService(RedisTestCluster.start()) { cluster in
            let prefix = Self.prefix()
            let plain = TierInstance(endpoint: try Self.seed(cluster), prefix: prefix)
            let keys = (0..<24).map { "rk\($0)" }
            #expect(Set(keys.map { SharedShard.index(of: $0, count: RedisTierConfiguration.defaultClusterShards) }).count > 4)
            for key in keys { try await plain.tier.store(Self.entry(key)) }
            let ring = try KeyRing(keys: [("k1", Array(repeating: 7, count: 32))])
            let sealing = TierInstance(
                endpoint: try Self.seed(cluster), prefix: prefix, codec: EntryCodec(keyRing: ring, acceptPlaintext: true))
            let report = try await sealing.tier.rekey()
            let again = try await sealing.tier.rekey()
            let strict = TierInstance(
                endpoint: try Self.seed(cluster), prefix: prefix, codec: EntryCodec(keyRing: ring, acceptPlaintext: false))
            var loaded = 0
            for key in keys where try await strict.tier.load(key) != nil { loaded += 1 }
            #expect(report.rekeyed == keys.count && report.undecryptable == 0)
            #expect(again.rekeyed == 0 && again.current == keys.count)
            #expect(loaded == keys.count)
        }
    }

    /// §13.6: `slotsCovered` counts the slots whose primary is up. A shard whose primary stops, with no replica to
    /// promote, falls out of it once the cluster marks that primary failed, and is back once the cluster has it up
    /// again (the map is read every second meanwhile). It used to stay at 16384 through the outage.
    @Test func slotsCoveredFollowsAShardThatLostItsPrimary() async throws {
        try await withService(RedisTestCluster.start(primaries: 3, replicasPerPrimary: 0)) { cluster in
            let instance = TierInstance(endpoint: try Self.seed(cluster), prefix: Self.prefix())
            try await instance.startConnected()
            func covered() -> Int { instance.statistics.cluster?.slotsCovered ?? -1 }
            #expect(covered() == 16384)
            let stopped = cluster.nodes[1]
            stopped.suspend()
            await waitUntil("the stopped primary's slots are left out", within: .seconds(30)) { (0..<16384).contains(covered()) }
            stopped.resume()
            await waitUntil("its slots are counted again", within: .seconds(30)) { covered() == 16384 }
            await instance.stop()
        }
    }

    /// The slot map is read again every `clusterMapRefresh` while every command succeeds (a replica attached after
    /// the first read, a slot moved that no command met): before, only a failure or a redirection read it, so a
    /// replica missing from the first read was missing from `/stats`' `nodes` for good.
    @Test func theSlotMapIsReadAgainWhileAllIsWell() async throws {
        try await withService(RedisTestCluster.start(primaries: 3, replicasPerPrimary: 0)) { cluster in
            let instance = TierInstance(endpoint: try Self.seed(cluster), prefix: Self.prefix(), clusterMapRefresh: .seconds(1))
            try await instance.startConnected()
            func reads() -> Int { instance.statistics.cluster?.mapRefreshes ?? -1 }
            let first = reads()
            await waitUntil("two more reads of the map", within: .seconds(30)) { reads() >= first + 2 }
            #expect(instance.statistics.cluster?.slotsCovered == 16384 && instance.statistics.cluster?.nodes == 3)
            await instance.stop()
        }
    }

    /// §6.6 per shard: with one shard's log lost while an instance is away, its restart resets that shard alone
    /// (`resetShard`), and applies the other shards' changes from their logs. The restart logs one line at info for
    /// the sixteen shards' catch-ups (sixteen before), with what they did.
    @Test func aLostShardLogResetsThatShardAlone() async throws {
        try await withService(RedisTestCluster.start()) { cluster in
            let prefix = Self.prefix()
            let folder = try TemporaryFolder.forCheckpoint()
            defer { folder.remove() }
            let file = folder.checkpointFile
            let shards = RedisTierConfiguration.defaultClusterShards
            let away = TierInstance(endpoint: try Self.seed(cluster), prefix: prefix, checkpointFile: file)
            try await away.startConnected()
            await away.stop()
            #expect(LogPositionFile(path: file, shards: shards).loadShards().count == shards)

            let other = TierInstance(endpoint: try Self.seed(cluster), prefix: prefix)
            let changed = "ch1", lostKey = try #require((0..<100).map { "lost\($0)" }.first {
                SharedShard.index(of: $0, count: shards) != SharedShard.index(of: "ch1", count: shards)
            })
            try await other.tier.store(Self.entry(changed))
            let lostShard = SharedShard.index(of: lostKey, count: shards)
            let log = prefix + "{s\(lostShard)}#log"
            let client = RedisClusterClient(endpoint: try Self.seed(cluster), timeout: .seconds(5), clock: ContinuousClock())
            defer { client.shutdown() }
            #expect(try await client.send(RedisCommand("DEL", log), key: Array(log.utf8)) == .integer(1))

            let lines = CapturingLogHandler.Store()
            var logger = CapturingLogHandler.logger(lines)
            logger.logLevel = .info
            let back = TierInstance(endpoint: try Self.seed(cluster), prefix: prefix, checkpointFile: file, logger: logger)
            try await back.startConnected()
            func subscribedLines() -> [String] { lines.rendered.filter { $0.hasPrefix("shared tier: subscribed") } }
            await waitUntil("the catch-ups are logged") { !subscribedLines().isEmpty }
            let events = back.events
            let statistics = back.statistics
            // A later loss is logged shard by shard: every subscription cut, each shard's catch-up is a line of its own.
            for node in cluster.nodes { _ = try await redisCommand(node, "CLIENT", "KILL", "TYPE", "pubsub") }
            await waitUntil("every shard's catch-up after the loss is logged") { subscribedLines().count == 1 + shards }
            await back.stop()
            #expect(events.contains(.invalidate(.key(changed))))
            #expect(events.filter { if case .resetShard = $0 { true } else { false } } == [.resetShard(SharedShard(index: lostShard, of: shards))])
            #expect(!events.contains(.reset))
            #expect(statistics.resets == 1 && statistics.replayed == 1)
            let logged = subscribedLines()
            #expect(logged.first?.hasSuffix("caughtUp=\(shards - 1) replayed=1 reset=1 shards=\(shards)") == true, "\(logged)")
            let later = logged.dropFirst()
            #expect(later.count == shards, "\(later)")
            #expect(Set(later.compactMap { $0.split(separator: " ").first { $0.hasPrefix("shard=") } }).count == shards)
        }
    }
}
