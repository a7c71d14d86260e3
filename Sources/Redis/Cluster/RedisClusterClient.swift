import Clocks
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A client of a Redis Cluster: the slot map read from a node (`CLUSTER SHARDS`, or `CLUSTER SLOTS`), one
/// `RedisNodeClient` per primary, each command sent to the primary serving its key's slot. A `-MOVED` is followed (the
/// map updated for that slot and read again) and an `-ASK` too (`ASKING` and the command, once, on one connection),
/// without failing the command; a `-TRYAGAIN` is retried after a moment. A node that cannot be reached has the map
/// read again (a failover: the cluster has promoted a replica), and the command goes to the new primary when there is
/// one. Every node is reached with the endpoint's credentials and TLS.
public final class RedisClusterClient: Sendable {
    /// The credentials, TLS and timeout of every node; its address is the first seed.
    public let endpoint: RedisEndpoint
    /// The nodes asked for the map when no primary of the last one answers.
    package let seeds: [RedisEndpoint.Address]
    let timeout: Duration
    /// The process's monotonic clock, given to every node client.
    let clock: any Clock<Duration>
    /// Readings of `clock`: when the map was last read.
    let elapsed: Elapsed
    let connectionsPerNode: Int
    let eventLoopGroup: any EventLoopGroup
    let logger: Logger
    /// The least time between two reads of the map (a burst of failures reads it once).
    let refreshInterval: Duration
    let state = NIOLockedValueBox(ClusterState())

    /// At most this many redirections (and retries after a failover) per command.
    static let attempts = 8

    /// A client of the cluster `seeds` belong to (default: the endpoint's seeds, `Target.cluster`, or its node). Reads
    /// nothing yet: the map is read by the first command (or `refreshMap()`). `clock`: the process's monotonic clock
    /// (the pace of the map's reads, the node clients' breakers).
    public init(
        endpoint: RedisEndpoint, seeds: [RedisEndpoint.Address]? = nil, timeout: Duration, clock: any Clock<Duration>,
        connectionsPerNode: Int = 2,
        refreshInterval: Duration = .milliseconds(100),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "unicache.redis")
    ) {
        self.endpoint = endpoint
        if case .cluster(let named) = endpoint.target {
            self.seeds = seeds ?? named
        } else {
            self.seeds = seeds ?? [endpoint.address]
        }
        self.timeout = timeout
        self.clock = clock
        elapsed = Elapsed(clock)
        self.connectionsPerNode = connectionsPerNode
        self.refreshInterval = refreshInterval
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
    }

    deinit { shutdown() }

    /// `command` on the primary serving the slot of `key`.
    public func send(_ command: RedisCommand, key: some Collection<UInt8>) async throws(RedisError) -> RedisReply {
        try await send(command, slot: RedisHashSlot.of(key))
    }

    /// `script` over `keys` (all in one slot, the first's) by its digest, once more with its text when the node lacks
    /// it (`NOSCRIPT`).
    public func evaluate(
        _ script: RedisScript, keys: [[UInt8]], arguments: [[UInt8]]
    ) async throws(RedisError) -> RedisReply {
        let slot = keys.first.map(RedisHashSlot.of) ?? 0
        let reply = try await send(script.command(keys: keys, arguments: arguments), slot: slot)
        guard reply.errorReply?.kind == .noScript else { return reply }
        return try await send(script.command(keys: keys, arguments: arguments, loading: true), slot: slot)
    }

    /// The node client of every primary (reading the map first when there is none): for what runs on each node
    /// (`SCAN`).
    public func primaries() async throws(RedisError) -> [RedisNodeClient] {
        guard let map = try await currentMap() else {
            throw state.withLockedValue { $0.mapFailure } ?? .unavailable("no node of \(endpoint) told the cluster's map")
        }
        return map.primaries.map(node)
    }

    /// The node client of the primary the map in use names for `key`'s slot, without waiting: nil before a map was
    /// read or while no primary serves the slot (the async `send` then reads the map). What it answers may be a
    /// redirection (`MOVED`, `ASK`) when the slot moved since: a caller that cannot follow one asks `send` instead.
    public func primaryNow(forKey key: [UInt8]) -> RedisNodeClient? {
        let slot = RedisHashSlot.of(key)
        guard let owner = state.withLockedValue({ $0.map?.primary(serving: slot) }) else { return nil }
        return node(owner)
    }

    /// The map in use; nil before the first one was read.
    public var map: RedisClusterMap? { state.withLockedValue { $0.map } }

    public var statistics: RedisClusterStatistics {
        state.withLockedValue { state in
            RedisClusterStatistics(
                nodes: state.map?.nodeCount ?? 0, slotsCovered: state.map?.slotsServed ?? 0, moved: state.moved,
                ask: state.ask, mapRefreshes: state.refreshes)
        }
    }

    /// Connects refused for their TLS, and refusals of the credentials or permissions, summed over every node's client
    /// (commands and map reads; a subscription counts in the failures it is given).
    public var connectFailureCounts: (tls: Int, authentication: Int) {
        let nodes = state.withLockedValue { Array($0.nodes.values) }
        return nodes.reduce((tls: 0, authentication: 0)) {
            (tls: $0.tls + $1.connectFailures.tls, authentication: $0.authentication + $1.connectFailures.authentication)
        }
    }

    /// Shuts every node client down; commands then fail with `.unavailable`. Idempotent.
    public func shutdown() {
        let (nodes, refresh) = state.withLockedValue { state in
            defer {
                state.isShutDown = true
                state.nodes = [:]
            }
            return (Array(state.nodes.values), state.refresh)
        }
        refresh?.cancel()
        for node in nodes { node.shutdown() }
    }

    /// The node client for `address` (made on first use).
    func node(_ address: RedisEndpoint.Address) -> RedisNodeClient {
        let (node, shutDown) = state.withLockedValue { state -> (RedisNodeClient, Bool) in
            if let node = state.nodes[address] { return (node, false) }
            let node = RedisNodeClient(
                endpoint: endpoint.node(at: address), timeout: timeout, clock: clock, size: connectionsPerNode,
                eventLoopGroup: eventLoopGroup, logger: logger)
            if !state.isShutDown { state.nodes[address] = node }
            return (node, state.isShutDown)
        }
        if shutDown { node.shutdown() }
        return node
    }
}

/// What `/stats` shows of a cluster (CONTRACT §13.6).
public struct RedisClusterStatistics: Sendable, Hashable {
    /// Nodes in the map, primaries and replicas.
    public var nodes: Int
    /// Slots whose primary is up, as the map's last read found: 16384 when the cluster is whole.
    public var slotsCovered: Int
    /// `-MOVED` and `-ASK` redirections followed.
    public var moved: Int
    public var ask: Int
    /// Reads of the map.
    public var mapRefreshes: Int
}

/// What a cluster client keeps behind its lock.
struct ClusterState: Sendable {
    var map: RedisClusterMap?
    var nodes: [RedisEndpoint.Address: RedisNodeClient] = [:]
    /// The read of the map under way, which callers meanwhile share.
    var refresh: Task<RedisClusterMap?, Never>?
    /// When the map was last read (a reading of the client's `elapsed`).
    var lastRefresh: Duration?
    /// Why the last read of the map found none (a refusal of the credentials when there was one); nil after a success.
    var mapFailure: RedisError?
    var moved = 0
    var ask = 0
    var refreshes = 0
    var isShutDown = false
}
