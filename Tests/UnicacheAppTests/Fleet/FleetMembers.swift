import Logging
import NIOConcurrencyHelpers
import Settings
import TestSupport
import Testing
import UnifiedCache

import UnicacheApp

/// What every fleet is, whatever its Redis (one server, a cluster): one test upstream and the instances started on
/// it with one shared tier's settings, and how to stop its Redis. `Fleet` and `ClusterFleet` carry one (`MembersFleet`).
struct FleetMembers: Sendable {
    let upstream: TestUpstream
    let upstreamPort: Int
    let instances: [LiveService]
    /// `--redis`, `--redis-timeout` and `--redis-prefix` of every instance.
    let settings: SharedTierSettings
    /// How long an instance may take to connect (on a cluster: to every shard).
    let connectBound: Duration
    private let stopRedis: @Sendable () async -> Void
    private let stopped = NIOLockedValueBox(false)

    var prefix: String { settings.prefix }
    /// Each instance's `--redis-timeout`.
    var timeout: Duration { settings.timeout }

    /// Starts the upstream and `count` instances and waits until each is connected. What started before a failure
    /// is stopped here, Redis too (`stopRedis`): the caller never gets a fleet to stop.
    static func start(
        instances count: Int, settings: SharedTierSettings, connectBound: Duration = .seconds(60),
        upstreamTimeout: Duration = .seconds(10), protection: [UpstreamDomain: UpstreamProtection] = [:],
        memory: MemoryTierConfiguration = MemoryTierConfiguration(), logger: Logger,
        stopRedis: @escaping @Sendable () async -> Void
    ) async throws -> FleetMembers {
        let upstream = TestUpstream()
        var instances: [LiveService] = []
        do {
            let upstreamPort = try await upstream.start()
            for _ in 0..<count {
                instances.append(
                    try await LiveService.start(
                        upstreamTimeout: upstreamTimeout, protection: protection, logger: logger,
                        upstream: (upstream, upstreamPort), redis: settings, memory: memory))
            }
            let members = FleetMembers(
                upstream: upstream, upstreamPort: upstreamPort, instances: instances, settings: settings,
                connectBound: connectBound, stopRedis: stopRedis)
            for instance in instances { await members.waitUntilConnected(instance) }
            return members
        } catch {
            for instance in instances { await instance.stop() }
            await upstream.shutdown()
            await stopRedis()
            throw error
        }
    }

    /// One more instance of the fleet (a restart, a scale-up), connected; `dataDir`: its disk tier's folder, if any.
    func startInstance(
        logger: Logger = Logger(label: "fleet-test"), upstreamTimeout: Duration = .seconds(10), dataDir: String? = nil
    ) async throws -> LiveService {
        let instance = try await LiveService.start(
            dataDir: dataDir, upstreamTimeout: upstreamTimeout, logger: logger, upstream: (upstream, upstreamPort),
            redis: settings)
        await waitUntilConnected(instance)
        return instance
    }

    /// Connected and subscribed, and the first position check done (its reset, if any, is behind us); on a
    /// cluster, in step with every shard.
    func waitUntilConnected(_ instance: LiveService) async {
        await waitUntil("the shared tier is connected", within: connectBound) { Self.shared(instance).connected }
    }

    /// Stops the instances it started, the upstream and Redis; later calls do nothing.
    func stop() async {
        guard stopped.withLockedValue({ stopped in defer { stopped = true }; return !stopped }) else { return }
        for instance in instances { await instance.stop() }
        await upstream.shutdown()
        await stopRedis()
    }

    static func shared(_ instance: LiveService) -> SharedTierStatistics {
        instance.app.cache.statistics().shared ?? SharedTierStatistics()
    }
}

/// A fleet that carries its `FleetMembers`: it reads their members as its own (`fleet.instances`, `fleet.prefix`),
/// starts more instances through them and stops with them.
@dynamicMemberLookup
protocol MembersFleet: StoppableService {
    var members: FleetMembers { get }
}

extension MembersFleet {
    subscript<Member>(dynamicMember member: KeyPath<FleetMembers, Member>) -> Member { members[keyPath: member] }

    /// One more instance of the fleet (a restart, a scale-up); `dataDir`: its disk tier's folder, if any.
    func startInstance(
        logger: Logger = Logger(label: "fleet-test"), upstreamTimeout: Duration = .seconds(10), dataDir: String? = nil
    ) async throws -> LiveService {
        try await members.startInstance(logger: logger, upstreamTimeout: upstreamTimeout, dataDir: dataDir)
    }

    func waitUntilConnected(_ instance: LiveService) async { await members.waitUntilConnected(instance) }

    /// Stops the instances it started, the upstream and Redis; later calls do nothing.
    func stop() async { await members.stop() }

    static func shared(_ instance: LiveService) -> SharedTierStatistics { FleetMembers.shared(instance) }
}
