import Foundation
import Logging
import Redis
import RedisTestSupport
import RedisTier
import Settings
import TestSupport
import TLSTestSupport
import Testing
import UnifiedCache

import UnicacheApp

/// Several whole services on 127.0.0.1 sharing a real Redis Cluster (six `redis-server` nodes: three primaries, three
/// replicas, on free ports, stopped by PID) with `--redis-cluster`, and one test upstream (CONTRACT §13).
struct ClusterFleet: MembersFleet {
    let cluster: RedisTestCluster
    /// The upstream, the instances, their settings.
    let members: FleetMembers
    /// The seed the instances are given (`--redis redis://… --redis-cluster`).
    let endpoint: RedisEndpoint

    /// The fleet's shard count (`RedisTierConfiguration.defaultClusterShards`).
    static let shards = RedisTierConfiguration.defaultClusterShards

    /// `aclUser`: the instances connect as this user (name, password, rules: what follows `on >PASSWORD`), created on
    /// every node; the default user stays for the test's own look-ups.
    static func start(
        instances count: Int, prefix: String? = nil, aclUser: Fleet.ACLUser? = nil, tls: TestCertificate.Authority? = nil,
        logger: Logger = Logger(label: "cluster-fleet-test")
    ) async throws -> ClusterFleet {
        let user = aclUser.map { ["--user", $0.name, "on", ">\($0.password)"] + $0.rules } ?? []
        let nodeCertificates = try tls.map { ($0, try $0.issue(), try $0.issue(commonName: "node", dnsNames: [], client: true)) }
        let cluster = try await RedisTestCluster.start(extraArguments: user, tls: nodeCertificates)
        let prefix = prefix ?? "c\(UInt32.random(in: 0...UInt32.max)):"
        let endpoint: RedisEndpoint
        do {
            endpoint = try await seed(of: cluster, tls: tls, user: aclUser)
        } catch {
            await cluster.stop()
            throw error
        }
        // Every shard's connection and log check: more than one server's.
        let members = try await FleetMembers.start(
            instances: count, settings: SharedTierSettings(redis: endpoint, timeout: .seconds(2), prefix: prefix),
            connectBound: .seconds(30), logger: logger, stopRedis: { await cluster.stop() })
        return ClusterFleet(cluster: cluster, members: members, endpoint: endpoint)
    }

    /// The first node as the instances' seed: its TLS port with `tls` (the map then names every node's,
    /// `tls-cluster yes`), as `user` if any.
    private static func seed(
        of cluster: RedisTestCluster, tls: TestCertificate.Authority?, user: Fleet.ACLUser?
    ) async throws -> RedisEndpoint {
        var endpoint = try RedisEndpoint(url: "redis://127.0.0.1:\(cluster.nodes[0].port)", cluster: true)
        if let tls {
            let port = try #require(try await redisCommand(cluster.nodes[0], "CONFIG", "GET", "tls-port").array?.last?.int)
            endpoint = try RedisEndpoint(url: "rediss://127.0.0.1:\(port)", cluster: true)
            endpoint.tls = RedisTLSOptions(caFile: tls.caFile, serverName: "localhost")
        }
        endpoint.user = user?.name
        endpoint.password = user?.password
        return endpoint
    }

    /// The seed as the default user (the test's own look-ups).
    var adminEndpoint: RedisEndpoint {
        var admin = endpoint
        admin.user = nil
        admin.password = nil
        if admin.tls != nil {
            admin = RedisEndpoint(host: "127.0.0.1", port: cluster.nodes[0].port)
            admin.target = .cluster(seeds: [RedisEndpoint.Address(host: "127.0.0.1", port: cluster.nodes[0].port)])
        }
        return admin
    }

    /// The shard of a cache key.
    static func shard(of key: String) -> Int { SharedShard.index(of: key, count: shards) }

    /// The Redis name of a cache key's entry.
    func entryName(_ key: String) -> String { members.prefix + "{s\(Self.shard(of: key))}" + key }

    /// The primary node serving a shard's slot now (asked of a fresh client of the cluster).
    func primary(ofShard shard: Int) async throws -> RedisServerProcess {
        let client = RedisClusterClient(endpoint: adminEndpoint, timeout: .seconds(5), clock: ContinuousClock())
        defer { client.shutdown() }
        let map = try #require(await client.refreshMap())
        let address = try #require(map.primary(serving: RedisHashSlot.of("{s\(shard)}")))
        return try #require(cluster.node(at: address.port))
    }

    /// `command` on the primary serving `key` (a Redis name), as a test's own look.
    func command(_ key: String, _ name: String, _ arguments: String...) async throws -> RedisReply {
        let client = RedisClusterClient(endpoint: adminEndpoint, timeout: .seconds(5), clock: ContinuousClock())
        defer { client.shutdown() }
        return try await client.send(RedisCommand(name, arguments: arguments.map { Array($0.utf8) }), key: Array(key.utf8))
    }

    /// The names under the fleet's prefix on every primary (`SCAN`).
    func namesInRedis() async throws -> [String] {
        let client = RedisClusterClient(endpoint: adminEndpoint, timeout: .seconds(5), clock: ContinuousClock())
        defer { client.shutdown() }
        var names: [String] = []
        for node in try await client.primaries() {
            var cursor = "0"
            repeat {
                let reply = try await node.send(.scan(cursor: cursor, match: members.prefix + "*", count: 1000))
                let parts = reply.array ?? []
                cursor = parts.first?.text ?? "0"
                names += (parts.count == 2 ? parts[1].array ?? [] : []).compactMap(\.text)
            } while cursor != "0"
        }
        return names
    }
}
