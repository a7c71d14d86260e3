import Foundation
import NIOConcurrencyHelpers
import Redis
import RedisTestSupport
import Settings
import TestSupport
import Testing
import UnifiedCache

import UnicacheApp

/// CONTRACT §13.2–3 through the real service on a six-node cluster: a restart replays each shard's own log (a shard
/// whose log cannot vouch resets its entries only), a killed primary, a slot moved under traffic.
@Suite(.serialized, .timeLimit(.minutes(3))) struct FleetClusterFailureTests {
    /// §6.6 per shard: while an instance is away, an event changes a user of one shard and another shard's log is
    /// lost; back, it applies the event from its shard's log, drops only the lost shard's entries, and serves every
    /// other entry from its disk.
    @Test func aRestartReplaysEachShardAndResetsOnlyTheOneThatCannotVouch() async throws {
        try await withService(ClusterFleet.start(instances: 1)) { fleet in
            let other = fleet.instances[0]
            try await withTemporaryFolder("cluster-at-rest") { dataDir in
                let users = (0..<12).map { "w\($0)" }
                let shardOf = { (user: String) in ClusterFleet.shard(of: "subscription:\(user)") }
                let changed = users[0]
                let lost = try #require(users.first { shardOf($0) != shardOf(changed) })
                let kept = users.filter { shardOf($0) != shardOf(changed) && shardOf($0) != shardOf(lost) }
                #expect(kept.count >= 3)
                try await withService(fleet.startInstance(dataDir: dataDir)) { first in
                    for user in users {
                        #expect(try await first.request(.GET, "/v1/users/\(user)/subscription").header("X-Cache") == "MISS")
                    }
                    await first.stop()

                    let event = try await other.request(
                        .POST, "/v1/users/\(changed)/events", body: #"{"type":"subscription.updated"}"#, admin: true)
                    #expect(event.status == 200)
                    let log = fleet.prefix + "{s\(shardOf(lost))}#log"
                    #expect(try await fleet.command(log, "DEL", log) == .integer(1))

                    try await withService(fleet.startInstance(dataDir: dataDir)) { back in
                        let changedAnswer = try await back.request(.GET, "/v1/users/\(changed)/subscription")
                        let lostAnswer = try await back.request(.GET, "/v1/users/\(lost)/subscription")
                        var keptTiers: [String?] = []
                        for user in kept { keptTiers.append(try await back.request(.GET, "/v1/users/\(user)/subscription").header("X-Cache-Tier")) }
                        let shared = ClusterFleet.shared(back)
                        await back.stop()
                        await fleet.stop()

                        #expect(changedAnswer.header("X-Cache") == "MISS")
                        // Its shard was reset: not from disk, but still stored in the cluster.
                        #expect(lostAnswer.header("X-Cache-Tier") == "shared")
                        #expect(keptTiers.allSatisfy { $0 == "disk" }, "\(keptTiers)")
                        #expect(shared.resets == 1)
                        // The event only, announced on every shard but the lost one: the first run's own stores are in its
                        // checkpoint, not replayed.
                        #expect(shared.replayed == ClusterFleet.shards - 1)
                    }
                }
            }
        }
    }

    /// §13.3: a primary killed; until its replica is promoted reads answer from local tiers, writes to its shards
    /// answer 503 with Retry-After and writes to other shards succeed; after the promotion its shards take writes.
    /// The replica's failover is held (`cluster-replica-no-failover`) until the refusals are checked, then let go.
    @Test func aKilledPrimaryRefusesOnlyItsShardsWritesUntilItsReplicaIsPromoted() async throws {
        try await withService(ClusterFleet.start(instances: 2)) { fleet in
            let (a, b) = (fleet.instances[0], fleet.instances[1])
            let victim = try await fleet.primary(ofShard: 0)
            var replica: RedisServerProcess?
            for node in fleet.cluster.nodes where node !== victim {
                let role = try await redisCommand(node, "ROLE").array ?? []
                if role.first?.text == "slave", role.count > 2, role[2].int == victim.port { replica = node }
            }
            let heir = try #require(replica)
            _ = try await redisCommand(heir, "CONFIG", "SET", "cluster-replica-no-failover", "yes")
            var deadShards: Set<Int> = []
            for shard in 0..<ClusterFleet.shards where try await fleet.primary(ofShard: shard) === victim { deadShards.insert(shard) }
            let keys = (0..<200).map { "k\($0)" }
            let deadKey = try #require(keys.first { deadShards.contains(ClusterFleet.shard(of: $0)) })
            let liveKey = try #require(keys.first { !deadShards.contains(ClusterFleet.shard(of: $0)) })
            let users = (0..<10).map { "p\($0)" }
            for user in users {
                _ = try await a.request(.GET, "/v1/users/\(user)/subscription")
                _ = try await b.request(.GET, "/v1/users/\(user)/subscription")
            }

            await victim.kill()
            var readStatuses: [Int] = []
            for user in users { readStatuses.append(try await b.request(.GET, "/v1/users/\(user)/subscription").status) }
            let refused = try await a.request(.PUT, "/v1/cache/\(deadKey)", body: "x", admin: true)
            let accepted = try await a.request(.PUT, "/v1/cache/\(liveKey)", body: "y", admin: true)
            #expect(readStatuses.allSatisfy { $0 == 200 }, "\(readStatuses)")
            #expect(refused.status == 503)
            #expect(refused.header("Retry-After").flatMap(Int.init) != nil)
            #expect(accepted.status == 201)
            #expect(try await b.request(.GET, "/v1/cache/\(liveKey)", admin: true).body == "y")

            _ = try await redisCommand(heir, "CONFIG", "SET", "cluster-replica-no-failover", "no")
            await waitUntil("the dead shard's writes succeed", within: .seconds(30)) {
                (try? await a.request(.PUT, "/v1/cache/\(deadKey)", body: "z", admin: true).status) == 201
            }
            for instance in [a, b] { await fleet.waitUntilConnected(instance) }
            #expect(try await b.request(.GET, "/v1/cache/\(deadKey)", admin: true).body == "z")
            #expect(try await fleet.primary(ofShard: deadShards.first!) === heir)
        }
    }

    /// §13.3: a shard's slot moved to another primary (as `redis-cli --cluster reshard` moves it: importing,
    /// migrating, the keys migrated, the slot assigned) while raw PUTs on its keys go on: every acknowledged PUT is
    /// readable afterwards from the other instance and stored in the cluster, the instances followed ASK or MOVED,
    /// every PUT after the move succeeds, and the other instance still hears the shard's changes (its sharded
    /// subscription, ended by the move, was made again on the new owner).
    @Test func aSlotMovedUnderTrafficLosesNoAcknowledgedPut() async throws {
        try await withService(ClusterFleet.start(instances: 2)) { fleet in
            let (a, b) = (fleet.instances[0], fleet.instances[1])
            let shard = 5
            let slot = RedisHashSlot.of("{s\(shard)}")
            let source = try await fleet.primary(ofShard: shard)
            let target = try #require(fleet.cluster.nodes.prefix(3).first { $0 !== source })
            let keys = Array((0..<3000).map { "m\($0)" }.filter { ClusterFleet.shard(of: $0) == shard }.prefix(60))
            #expect(keys.count == 60)
            let acknowledged = NIOLockedValueBox<[String]>([])
            @Sendable func put(_ key: String, _ value: String) async -> Bool {
                let answer = try? await a.request(.PUT, "/v1/cache/\(key)", body: value, admin: true)
                guard let answer, answer.status == 201 || answer.status == 200 else { return false }
                acknowledged.withLockedValue { $0.append(key) }
                return true
            }
            for key in keys[0..<20] { #expect(await put(key, "value-\(key)")) }
            // B holds one of them in memory.
            #expect(try await b.request(.GET, "/v1/cache/\(keys[0])", admin: true).body == "value-\(keys[0])")

            let writer = Task { for key in keys[20..<39] { _ = await put(key, "value-\(key)") } }
            try await fleet.cluster.beginMoving(slot, from: source, to: target)
            // One PUT while the slot migrates: the source holds none of the shard's keys any more and answers ASK,
            // whenever the writer's PUTs came (under ThreadSanitizer they once all came before the move, and the PUTs
            // after it went to the owner the lost subscription had shown already: none was redirected). Stored, or
            // 503 to be retried (a script across a migrating slot), never lost.
            let during = try await a.request(.PUT, "/v1/cache/\(keys[39])", body: "value-\(keys[39])", admin: true)
            #expect([200, 201, 503].contains(during.status), "\(during.status)")
            if during.status != 503 { acknowledged.withLockedValue { $0.append(keys[39]) } }
            try await fleet.cluster.finishMoving(slot, to: target)
            await writer.value
            for key in keys[40..<60] { #expect(await put(key, "value-\(key)"), "\(key) after the move") }

            for key in acknowledged.withLockedValue({ $0 }) {
                #expect(try await fleet.command(fleet.entryName(key), "EXISTS", fleet.entryName(key)) == .integer(1), "\(key)")
                #expect(try await b.request(.GET, "/v1/cache/\(key)", admin: true).body == "value-\(key)", "\(key)")
            }
            #expect(try await fleet.primary(ofShard: shard) === target)
            let statistics = try #require(ClusterFleet.shared(a).cluster)
            #expect(statistics.moved + statistics.ask > 0)
            let metrics = try await a.request(.GET, "/metrics").body
            let redirects = metrics.split(separator: "\n").filter { $0.hasPrefix("unicache_shared_redirects_total{") }
            let counted = redirects.compactMap { $0.split(separator: " ").last.flatMap { Int($0) } }.reduce(0, +)
            #expect(counted == statistics.moved + statistics.ask, "\(redirects)")

            // B hears the shard's next change on the new owner.
            await fleet.waitUntilConnected(b)
            let before = ClusterFleet.shared(b).invalidationsReceived
            #expect(await put(keys[0], "changed"))
            await waitUntil("the change reaches B") { ClusterFleet.shared(b).invalidationsReceived > before }
            #expect(try await b.request(.GET, "/v1/cache/\(keys[0])", admin: true).body == "changed")
        }
    }
}
