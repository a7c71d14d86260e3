import Foundation
import Redis
import Settings
import TestSupport
import Testing

import UnicacheApp

/// `--redis-cluster` (CONTRACT §13): `--redis` names a seed of a Redis Cluster, more seeds as `?addr=`; combinations
/// that name no cluster stop start-up naming the flags.
@Suite("--redis-cluster at start-up", .timeLimit(.minutes(1)))
struct RedisClusterOptionTests {
    @Test func theSeedAndMoreSeedsNameACluster() throws {
        let flag = try UnicacheConfiguration.parse(
            arguments: ["--redis", "rediss://app:pw@10.0.0.5:7000?addr=10.0.0.6:7001&addr=10.0.0.7", "--redis-cluster"],
            environment: [:])
        let endpoint = try #require(flag.shared.redis)
        #expect(endpoint.target == .cluster(seeds: [
            RedisEndpoint.Address(host: "10.0.0.5", port: 7000), RedisEndpoint.Address(host: "10.0.0.6", port: 7001),
            RedisEndpoint.Address(host: "10.0.0.7", port: 6379),
        ]))
        #expect(endpoint.tls != nil && endpoint.user == "app" && endpoint.password == "pw")
        let variable = try UnicacheConfiguration.parse(
            arguments: [], environment: ["UNICACHE_REDIS": "redis://10.0.0.5:7000", "UNICACHE_REDIS_CLUSTER": "true"])
        #expect(variable.shared.redis?.target == .cluster(seeds: [RedisEndpoint.Address(host: "10.0.0.5", port: 7000)]))
        // The password from a file, as for one Redis.
        let (folder, path) = try secretFile("cluster-pw\n", mode: 0o600, name: "redis-password")
        defer { folder.remove() }
        let filed = try UnicacheConfiguration.parse(
            arguments: ["--redis", "redis://app@10.0.0.5:7000", "--redis-cluster", "--redis-password-file", path],
            environment: [:])
        #expect(filed.shared.redis?.password == "cluster-pw" && filed.shared.redis?.user == "app")
        #expect(filed.shared.redis?.description.contains("cluster-pw") == false)
        // Off (the default, or false): one Redis, as before.
        let off = try UnicacheConfiguration.parse(
            arguments: [], environment: ["UNICACHE_REDIS": "redis://10.0.0.5:7000", "UNICACHE_REDIS_CLUSTER": "false"])
        #expect(off.shared.redis?.target == .node(RedisEndpoint.Address(host: "10.0.0.5", port: 7000)))
    }

    @Test func combinationsThatNameNoClusterStopStartUp() throws {
        let sentinel = configurationError(["--redis", "redis-sentinel://s1,s2?master=m", "--redis-cluster"])
        #expect(sentinel.hasPrefix("--redis: ") && sentinel.contains("not redis-sentinel://") && sentinel.contains("--redis-cluster"), "\(sentinel)")
        let database = configurationError(["--redis", "redis://h:7000/2", "--redis-cluster"])
        #expect(database.hasPrefix("--redis: ") && database.contains("database 0 only"), "\(database)")
        #expect(configurationError(["--redis-cluster"]) == "--redis-cluster: given without a --redis URL (a seed node of the cluster)")
        #expect(configurationError([], ["UNICACHE_REDIS_CLUSTER": "true"]).hasPrefix("UNICACHE_REDIS_CLUSTER: given without a --redis URL"))
        #expect(configurationError([], ["UNICACHE_REDIS": "redis://h", "UNICACHE_REDIS_CLUSTER": "maybe"]).hasPrefix("UNICACHE_REDIS_CLUSTER: "))
        // Seeds without --redis-cluster are refused as before.
        #expect(configurationError(["--redis", "redis://h?addr=h2:7001"]).contains("must not have a query"))
    }
}
