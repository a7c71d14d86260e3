import Foundation
import Logging
import Redis
import RedisTestSupport
import RedisTier
import Settings
import TestSupport
import Testing
import UnifiedCache

import UnicacheApp

/// Several whole services on 127.0.0.1 sharing one real `redis-server` (started on a free port, stopped by its
/// PID) and one test upstream: a fleet as CONTRACT §6 describes it.
/// Start it with `withService(Fleet.start(…))`, which stops it on every path.
struct Fleet: MembersFleet {
    let redis: RedisServerProcess
    /// The upstream, the instances, their settings.
    let members: FleetMembers
    /// What the instances connect with: the server's endpoint, or an ACL user's (`aclUser`).
    let serviceEndpoint: RedisEndpoint

    /// An ACL user the instances connect as (CONTRACT §10.2); `rules` are what follows `on >PASSWORD`.
    struct ACLUser: Sendable {
        var name: String
        var password: String
        var rules: [String]
    }

    /// `timeout`: each instance's `--redis-timeout`. The default is generous: a command past it is skipped or fails
    /// (a store skipped announces nothing), and the whole suite on two busy cores delays a reply by hundreds of
    /// milliseconds at times (a refresh's store once missed 200 ms). The tests of a hung Redis pass their own.
    static func start(
        instances count: Int, password: String? = nil, timeout: Duration = .seconds(2),
        upstreamTimeout: Duration = .seconds(10), logger: Logger = Logger(label: "fleet-test"),
        memory: MemoryTierConfiguration = MemoryTierConfiguration(),
        protection: [UpstreamDomain: UpstreamProtection] = [:], prefix: String? = nil, aclUser: ACLUser? = nil
    ) async throws -> Fleet {
        var arguments: [String] = []
        if let aclUser { arguments = ["--user", aclUser.name, "on", ">\(aclUser.password)"] + aclUser.rules }
        let redis = try await RedisServerProcess.start(password: password, extraArguments: arguments)
        let endpoint = aclUser.map {
            RedisEndpoint(host: "127.0.0.1", port: redis.port, user: $0.name, password: $0.password)
        } ?? redis.endpoint
        let prefix = prefix ?? "t\(UInt32.random(in: 0...UInt32.max)):"
        let members = try await FleetMembers.start(
            instances: count, settings: tierConfiguration(endpoint, timeout: timeout, prefix: prefix),
            upstreamTimeout: upstreamTimeout, protection: protection, memory: memory, logger: logger,
            stopRedis: { await redis.stop() })
        return Fleet(redis: redis, members: members, serviceEndpoint: endpoint)
    }

    /// `--redis`, `--redis-timeout` and `--redis-prefix` of one instance (its fill lease follows from its upstream
    /// timeout, as `UnicacheService.build` derives it).
    static func tierConfiguration(_ endpoint: RedisEndpoint, timeout: Duration, prefix: String) -> SharedTierSettings {
        SharedTierSettings(redis: endpoint, timeout: timeout, prefix: prefix)
    }

    /// `count` concurrent cold requests for one key spread over `instances` (one fleet), the upstream held until every
    /// one waits; their answers.
    static func stampede(_ count: Int, on instances: [LiveService], upstream: TestUpstream) async throws -> [LiveService.Answer] {
        let gate = Gate()
        upstream.set("/users/crowd/subscription", .gated(gate, .json(#"{"plan":"pro"}"#)))
        return try await withThrowingTaskGroup(of: LiveService.Answer.self) { group in
            for index in 0..<count {
                let instance = instances[index % instances.count]
                group.addTask { try await instance.request(.GET, "/v1/users/crowd/subscription") }
            }
            await upstream.waitForRequests("/users/crowd/subscription", count: 1)
            // Every request has arrived and waits: on each instance one load (on the upstream, or on the fleet's fill
            // lease) and its other requests joined to it. Opening the gate earlier would let a late request find the
            // stored value and answer HIT.
            await waitUntil("all \(count) requests wait", within: .seconds(60)) {
                instances.map { $0.app.cache.coalescedWaiters(for: "subscription:crowd") }.reduce(0, +)
                    == count - instances.count
            }
            // And each instance's load has looked in Redis and asked for the fill lease (one script, CONTRACT §10.4): a
            // load still on its way to the shared tier when the gate opens would find the value stored and answer HIT
            // for all of its instance's requests.
            await waitUntil("every instance claimed the fill lease", within: .seconds(60)) {
                instances.allSatisfy { Fleet.shared($0).operations[.init("lookup", "ok"), default: 0] >= 1 }
            }
            gate.open()
            return try await group.reduce(into: []) { $0.append($1) }
        }
    }
}
