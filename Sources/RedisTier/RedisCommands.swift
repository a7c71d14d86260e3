import Logging
import Redis
import UnifiedCache

/// What this instance sends to the fleet's Redis, and as whom: the Redis link (one node, a Sentinel-watched primary,
/// or a cluster), every command counted by operation and result, scripts by digest, and this instance's id in the
/// fleet. The shared tier, the fleet's membership and its rate counters each take this, and nothing of one another.
public final class RedisCommands: Sendable {
    let keys: RedisKeys
    /// This instance in the fleet's messages and announcements.
    let instanceID: String
    let link: RedisLink
    let counters = SharedTierCounters()
    let logger: Logger

    init(configuration: RedisTierConfiguration, clock: any Clock<Duration>, logger: Logger) {
        link = RedisLink(configuration: configuration, clock: clock, logger: logger)
        keys = RedisKeys(prefix: configuration.prefix, shards: link.isCluster ? configuration.clusterShards : 1)
        instanceID = Self.randomToken()
        self.logger = logger
    }

    /// One command on the node serving `key`'s slot (any node but a cluster's), counted; an error reply or a failure
    /// is `SharedTierUnavailable`.
    func run(_ operation: String, _ command: RedisCommand, key: String) async throws(SharedTierUnavailable) -> RedisReply {
        try counted(operation, try await reply(operation) { () async throws(RedisError) in
            try await link.send(command, key: key)
        })
    }

    /// One command on `node` (a cluster's primary: `SCAN`), counted.
    func run(_ operation: String, _ command: RedisCommand, on node: RedisNodeClient) async throws(SharedTierUnavailable)
        -> RedisReply
    {
        try counted(operation, try await reply(operation) { () async throws(RedisError) in try await node.send(command) })
    }

    /// `script` over `keys` (one slot: the first key's) and `arguments` (by its digest; with its text when Redis lacks
    /// it), counted once.
    func run(
        _ operation: String, _ script: RedisScript, keys: [String], arguments: [[UInt8]]
    ) async throws(SharedTierUnavailable) -> RedisReply {
        let keys = keys.map(Self.bytes)
        return try counted(operation, try await reply(operation) { () async throws(RedisError) in
            try await link.evaluate(script, keys: keys, arguments: arguments)
        })
    }

    /// The nodes holding entries: the one node, or every primary of the cluster (`SCAN` runs on each).
    func entryNodes() async throws(SharedTierUnavailable) -> [RedisNodeClient] {
        do throws(RedisError) {
            return try await link.entryNodes()
        } catch {
            counters.operation("scan", Self.result(.failure(error)))
            throw SharedTierUnavailable(reason: error.reason)
        }
    }

    /// `script` with arguments that are all text.
    func run(
        _ operation: String, _ script: RedisScript, keys: [String], arguments: [String]
    ) async throws(SharedTierUnavailable) -> RedisReply {
        try await run(operation, script, keys: keys, arguments: arguments.map(Self.bytes))
    }

    /// The node client's answer; a failure to get one is counted and `SharedTierUnavailable`.
    private func reply(
        _ operation: String, _ send: () async throws(RedisError) -> RedisReply
    ) async throws(SharedTierUnavailable) -> RedisReply {
        do throws(RedisError) {
            return try await send()
        } catch {
            counters.operation(operation, Self.result(.failure(error)))
            throw SharedTierUnavailable(reason: error.reason)
        }
    }

    /// Counts `reply`; an error reply is `SharedTierUnavailable`. Redis's text is not logged (it may repeat the
    /// command's arguments: keys and values): its prefix and what it means are.
    private func counted(_ operation: String, _ reply: RedisReply) throws(SharedTierUnavailable) -> RedisReply {
        let result = Self.result(.success(reply))
        counters.operation(operation, result)
        guard let summary = reply.errorSummary else { return reply }
        // A refusal is logged by the node client, once per back-off, naming the user.
        if result == "error" {
            logger.warning("shared tier: Redis refused a command", metadata: ["operation": "\(operation)", "error": "\(summary)"])
        }
        throw SharedTierUnavailable(reason: "Redis answered \(summary) to \(operation)")
    }

    /// How a command's outcome is counted: `ok`; `refused` when Redis refused the user's credentials or permissions
    /// (`WRONGPASS`, `NOAUTH`, `NOPERM`: in `shared.authErrors`, which the node client counts, and not in
    /// `shared.errors`); else `error`.
    static func result(_ outcome: Result<RedisReply, RedisError>) -> String {
        switch outcome {
        case .success(let reply): reply.errorSummary == nil ? "ok" : reply.isRefusal ? "refused" : "error"
        case .failure(.refused): "refused"
        case .failure: "error"
        }
    }

    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return String(generator.next() as UInt64, radix: 36) + String(generator.next() as UInt64, radix: 36)
    }
}
