import Redis
import RedisTestSupport
import Testing
import TestSupport
import TLSTestSupport

/// The cluster client against a real six-node cluster (three primaries, three replicas) the tests start.
@Suite("Redis Cluster client against a real cluster")
struct RedisClusterTests {
    @Test func theMapIsReadAndEveryKeyGoesToItsSlotsPrimary() async throws {
        try await withService(RedisTestCluster.start()) { cluster in
            // The first seed refuses connections: the next one tells the map.
            let refusing = try ReservedPort()
            defer { refusing.release() }
            let seeds = try RedisEndpoint(
                url: "redis://127.0.0.1:\(refusing.port)?addr=127.0.0.1:\(cluster.nodes[4].port)", cluster: true)
            let client = RedisClusterClient(endpoint: seeds, timeout: .seconds(5), clock: ContinuousClock())
            defer { client.shutdown() }
            let map = try #require(await client.refreshMap())
            #expect(map.shards.count == 3)
            #expect(map.nodeCount == 6)
            #expect(map.slotsCovered == 16384)

            for index in 0..<60 {
                let key = "key-\(index)"
                #expect(try await client.send(.setIfAbsent(key, "v\(index)", expiringAfter: 60_000), key: key.utf8) == .status("OK"))
                #expect(try await client.send(.get(key), key: key.utf8) == .string(Array("v\(index)".utf8)))
                // The node the map names is the one that holds the key (its own GET answers it, no MOVED).
                let owner = try #require(map.primary(serving: RedisHashSlot.of(key)))
                let node = try #require(cluster.node(at: owner.port))
                #expect(try await redisCommand(node, "GET", key) == .string(Array("v\(index)".utf8)))
                #expect(try await redisCommand(node, "CLUSTER", "KEYSLOT", key).int == RedisHashSlot.of(key))
            }
            // A script over keys of one hash tag runs on their slot's primary.
            let script = RedisScript("redis.call('SET', KEYS[1], ARGV[1]); return redis.call('GET', KEYS[2])")
            let keys = ["{alice}.a", "{alice}.b"].map { Array($0.utf8) }
            _ = try await client.send(.setIfAbsent("{alice}.b", "b", expiringAfter: 60_000), key: keys[1])
            #expect(try await client.evaluate(script, keys: keys, arguments: [Array("a".utf8)]) == .string(Array("b".utf8)))
            #expect(try await client.primaries().count == 3)
            let statistics = client.statistics
            #expect(statistics.moved == 0)
            #expect(statistics.ask == 0)
            #expect(statistics.mapRefreshes == 1)
        }
    }

    @Test func aMigratingSlotIsAskedAndAMovedSlotIsFollowed() async throws {
        try await withClusterClient { cluster, client async throws in
            let key = "moving-key"
            let slot = RedisHashSlot.of(key)
            _ = try await client.send(.setIfAbsent(key, "value", expiringAfter: 600_000), key: key.utf8)
            let map = try #require(client.map)
            let sourceAddress = try #require(map.primary(serving: slot))
            let source = try #require(cluster.node(at: sourceAddress.port))
            let targetAddress = try #require(map.primaries.first { $0 != sourceAddress })
            let target = try #require(cluster.node(at: targetAddress.port))

            // Mid-migration, the key moved already: the source answers ASK, the target serves it after ASKING.
            try await cluster.beginMoving(slot, from: source, to: target)
            #expect(try await redisCommand(source, "GET", key).errorReply?.kind == .ask)
            #expect(try await client.send(.get(key), key: key.utf8) == .string(Array("value".utf8)))
            #expect(client.statistics.ask == 1)
            #expect(client.map?.primary(serving: slot)?.port == source.port, "an ASK does not change the map")

            // The slot is the target's now: MOVED, followed, and the map says so.
            try await cluster.finishMoving(slot, to: target)
            #expect(try await client.send(.get(key), key: key.utf8) == .string(Array("value".utf8)))
            #expect(client.statistics.moved == 1)
            #expect(client.map?.primary(serving: slot)?.port == target.port)
            #expect(try await client.send(.get(key), key: key.utf8) == .string(Array("value".utf8)))
            #expect(client.statistics.moved == 1, "the next command goes to the new owner at once")
        }
    }

    @Test func aKilledPrimaryIsReplacedByItsReplicaAndOtherShardsGoOn() async throws {
        try await withClusterClient(timeout: .seconds(2)) { cluster, client async throws in
            let key = "survivor"
            _ = try await client.send(.setIfAbsent(key, "1", expiringAfter: 600_000), key: key.utf8)
            let map = try #require(client.map)
            let slot = RedisHashSlot.of(key)
            let dead = try #require(map.primary(serving: slot))
            let other = try #require((0..<1000).map { "other-\($0)" }.first { map.primary(serving: RedisHashSlot.of($0)) != dead })
            let deadNode = try #require(cluster.node(at: dead.port))
            await deadNode.kill()

            // Another shard's writes never fail meanwhile; this shard's come back once the replica is promoted.
            var otherWrites = 0
            await waitUntil("a write to the killed primary's shard succeeds", within: .seconds(60)) {
                let write = try? await client.send(RedisCommand("SET", other, "\(otherWrites)"), key: other.utf8)
                #expect(write == .status("OK"))
                otherWrites += 1
                return (try? await client.send(RedisCommand("SET", key, "2"), key: key.utf8)) == .status("OK")
            }
            #expect(otherWrites > 0)
            let promoted = try #require(client.map?.primary(serving: slot))
            #expect(promoted != dead)
            #expect(map.shards.first { $0.primary == dead }?.replicas.contains(promoted) == true)
            #expect(client.statistics.mapRefreshes >= 2)
        }
    }

    @Test func aShardedChannelIsHeardOnItsSlotsPrimaryUntilTheSlotMoves() async throws {
        try await withClusterClient { cluster, client async throws in
            let channel = "{s7}inval"
            let slot = RedisHashSlot.of(channel)
            let subscription = try await client.shardedSubscription(to: [channel])
            var messages = subscription.messages.makeAsyncIterator()
            #expect(try await client.send(RedisCommand("SPUBLISH", channel, "hello"), key: channel.utf8) == .integer(1))
            let heard = await messages.next()
            #expect(heard == RedisPubSubMessage(channel: channel, payload: Array("hello".utf8), isSharded: true))

            // The slot moves to another primary: Redis ends the subscription; a new one follows the MOVED there.
            let map = try #require(client.map)
            let owner = try #require(map.primary(serving: slot))
            let targetAddress = try #require(map.primaries.first { $0 != owner })
            let target = try #require(cluster.node(at: targetAddress.port))
            let source = try #require(cluster.node(at: owner.port))
            try await cluster.beginMoving(slot, from: source, to: target)
            try await cluster.finishMoving(slot, to: target)
            #expect(await messages.next() == nil)
            let again = try await client.shardedSubscription(to: [channel])
            defer { again.closeSoon() }
            #expect(client.statistics.moved == 1)
            var moved = again.messages.makeAsyncIterator()
            #expect(try await client.send(RedisCommand("SPUBLISH", channel, "again"), key: channel.utf8) == .integer(1))
            #expect(await moved.next()?.payload == Array("again".utf8))
        }
    }
}

/// ACL users on a cluster (CONTRACT §10.2 on every node).
@Suite("Redis Cluster client as an ACL user")
struct RedisClusterACLTests {
    @Test func everyNodeIsReachedAsTheUserAndAWrongPasswordIsARefusal() async throws {
        let rules = ["--user", "app", "on", ">pw", "~unicache:*", "&unicache:*", "+@all"]
        try await withService(RedisTestCluster.start(extraArguments: rules)) { cluster in
            var app = cluster.seed
            app.user = "app"
            app.password = "pw"
            let client = RedisClusterClient(endpoint: app, timeout: .seconds(5), clock: ContinuousClock())
            defer { client.shutdown() }
            for index in 0..<30 {
                let key = "unicache:\(index)"
                #expect(try await client.send(RedisCommand("SET", key, "v"), key: key.utf8) == .status("OK"))
            }
            #expect(try await client.send(RedisCommand("SET", "other", "v"), key: "other".utf8).errorReply?.kind == .noPerm)
            for primary in try await client.primaries() {
                #expect(try await primary.send(RedisCommand("ACL", "WHOAMI")) == .string(Array("app".utf8)))
            }

            var wrong = app
            wrong.password = "not-pw"
            let refused = RedisClusterClient(endpoint: wrong, timeout: .seconds(5), clock: ContinuousClock())
            defer { refused.shutdown() }
            let error = await #expect(throws: RedisError.self) {
                try await refused.send(RedisCommand("GET", "unicache:1"), key: "unicache:1".utf8)
            }
            guard case .refused(let reason)? = error else {
                Issue.record("not a refusal: \(String(describing: error))")
                return
            }
            #expect(reason.contains("app") && !reason.contains("not-pw"), "\(reason)")
        }
    }
}

/// A cluster over TLS (`tls-cluster yes`, CONTRACT §13.2): every node is reached on its TLS port, verified.
@Suite("Redis Cluster client over TLS")
struct RedisClusterTLSTests {
    @Test func theMapNamesTheTLSPortsAndEveryNodeIsVerified() async throws {
        let temporary = try TemporaryFolder("unicache-cluster-tls")
        defer { temporary.remove() }
        let pki = try TestCertificate.Authority(folder: temporary.url)
        let nodeCertificates = (pki, try pki.issue(), try pki.issue(commonName: "node", dnsNames: [], client: true))
        try await withService(RedisTestCluster.start(tls: nodeCertificates)) { cluster in
            let tlsPort = try #require(try await redisCommand(cluster.nodes[0], "CONFIG", "GET", "tls-port").array?.last?.int)
            var seed = RedisEndpoint(host: "127.0.0.1", port: tlsPort)
            seed.tls = RedisTLSOptions(caFile: pki.caFile, serverName: "localhost")
            let client = RedisClusterClient(endpoint: seed, timeout: .seconds(5), clock: ContinuousClock())
            defer { client.shutdown() }
            for index in 0..<30 {
                let key = "tls-\(index)"
                #expect(try await client.send(RedisCommand("SET", key, "v"), key: key.utf8) == .status("OK"))
            }
            let map = try #require(client.map)
            let plainPorts = Set(cluster.nodes.map(\.port))
            #expect(map.primaries.count == 3 && map.primaries.allSatisfy { !plainPorts.contains($0.port) })

            // A certificate that does not verify is refused on every node: no map, no command.
            let otherCA = try TestCertificate.Authority(folder: temporary.url, name: "someone else's CA")
            var untrusted = seed
            untrusted.tls = RedisTLSOptions(caFile: otherCA.caFile, serverName: "localhost")
            let refused = RedisClusterClient(endpoint: untrusted, timeout: .seconds(5), clock: ContinuousClock())
            defer { refused.shutdown() }
            await #expect(throws: RedisError.self) { try await refused.send(.get("tls-1"), key: "tls-1".utf8) }
            #expect(refused.map == nil)
        }
    }
}
