import Logging
import Redis

/// How the shared tier reaches its Redis: one node client (a node, or a Sentinel-watched primary), or a cluster
/// client sending each command to the primary of its key's slot (`--redis-cluster`, CONTRACT §13).
enum RedisLink: Sendable {
    case node(RedisNodeClient)
    case cluster(RedisClusterClient)

    init(configuration: RedisTierConfiguration, clock: any Clock<Duration>, logger: Logger) {
        if case .cluster = configuration.endpoint.target {
            self = .cluster(
                RedisClusterClient(
                    endpoint: configuration.endpoint, timeout: configuration.timeout, clock: clock,
                    connectionsPerNode: configuration.connections, logger: logger))
        } else {
            self = .node(
                RedisNodeClient(
                    endpoint: configuration.endpoint, timeout: configuration.timeout, clock: clock,
                    size: configuration.connections, dedicatedEventLoop: true, logger: logger))
        }
    }

    var isCluster: Bool {
        if case .cluster = self { true } else { false }
    }

    /// The node client, nil on a cluster.
    var node: RedisNodeClient? {
        if case .node(let node) = self { node } else { nil }
    }

    /// The node client a command on `key` goes to now, without waiting (on a cluster, the primary the map names for
    /// its slot; nil before a map was read).
    func nodeNow(forKey key: [UInt8]) -> RedisNodeClient? {
        switch self {
        case .node(let node): node
        case .cluster(let cluster): cluster.primaryNow(forKey: key)
        }
    }

    /// `nodeNow(forKey:)` for the key `head` + `tail` (joined only on a cluster, which routes by it).
    func nodeNow(forKey head: [UInt8], _ tail: String) -> RedisNodeClient? {
        switch self {
        case .node(let node): node
        case .cluster(let cluster): cluster.primaryNow(forKey: head + Array(tail.utf8))
        }
    }

    var cluster: RedisClusterClient? {
        if case .cluster(let cluster) = self { cluster } else { nil }
    }

    var endpoint: RedisEndpoint {
        switch self {
        case .node(let node): node.endpoint
        case .cluster(let cluster): cluster.endpoint
        }
    }

    func send(_ command: RedisCommand, key: String) async throws(RedisError) -> RedisReply {
        switch self {
        case .node(let node): try await node.send(command)
        case .cluster(let cluster): try await cluster.send(command, key: Array(key.utf8))
        }
    }

    func evaluate(_ script: RedisScript, keys: [[UInt8]], arguments: [[UInt8]]) async throws(RedisError) -> RedisReply {
        switch self {
        case .node(let node): try await node.evaluate(script, keys: keys, arguments: arguments)
        case .cluster(let cluster): try await cluster.evaluate(script, keys: keys, arguments: arguments)
        }
    }

    func entryNodes() async throws(RedisError) -> [RedisNodeClient] {
        switch self {
        case .node(let node): [node]
        case .cluster(let cluster): try await cluster.primaries()
        }
    }

    /// Whether commands may be sent: a node's breaker is closed (a cluster's nodes each have their own: true).
    var isAvailable: Bool { node?.isAvailable ?? true }

    func shutdown() {
        switch self {
        case .node(let node): node.shutdown()
        case .cluster(let cluster): cluster.shutdown()
        }
    }
}
