import Logging
import Redis
import UnifiedCache

/// What this instance sends to the fleet's Redis, and as whom: the command pool, every command counted by operation
/// and result, scripts by digest, and this instance's id in the fleet. The shared tier, the fleet's membership and
/// its rate counters each take this, and nothing of one another.
public final class RedisCommands: Sendable {
    let keys: RedisKeys
    /// This instance in the fleet's messages and announcements.
    let instanceID: String
    let pool: RedisCommandPool
    let counters = SharedTierCounters()
    let logger: Logger

    init(configuration: RedisTierConfiguration, logger: Logger) {
        keys = RedisKeys(prefix: configuration.prefix)
        instanceID = Self.randomToken()
        pool = RedisCommandPool(
            endpoint: configuration.endpoint, timeout: configuration.timeout, size: configuration.connections,
            dedicatedEventLoop: true, logger: logger)
        self.logger = logger
    }

    /// One command through the pool, counted; an error reply or a failure is `SharedTierUnavailable`.
    func run(_ operation: String, _ arguments: [[UInt8]]) async throws(SharedTierUnavailable) -> RedisReply {
        try counted(operation, try await send(operation, arguments))
    }

    /// `script` over `keys` and `arguments` by its digest; sent once more with its text when Redis answers that
    /// it does not have it (`NOSCRIPT`: Redis restarted, or its script cache was flushed).
    func run(
        _ operation: String, _ script: RedisScript, keys: [String], arguments: [[UInt8]]
    ) async throws(SharedTierUnavailable) -> RedisReply {
        let keys = keys.map(Self.bytes)
        let reply = try await send(operation, script.command(keys: keys, arguments: arguments))
        if case .error(let message) = reply, message.hasPrefix("NOSCRIPT") {
            return try await run(operation, script.command(keys: keys, arguments: arguments, loading: true))
        }
        return try counted(operation, reply)
    }

    /// `script` with arguments that are all text.
    func run(
        _ operation: String, _ script: RedisScript, keys: [String], arguments: [String]
    ) async throws(SharedTierUnavailable) -> RedisReply {
        try await run(operation, script, keys: keys, arguments: arguments.map(Self.bytes))
    }

    /// The pool's answer; a failure to get one is counted and `SharedTierUnavailable`.
    private func send(_ operation: String, _ arguments: [[UInt8]]) async throws(SharedTierUnavailable) -> RedisReply {
        do throws(RedisError) {
            return try await pool.command(arguments)
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
        // A refusal is logged by the pool, once per back-off, naming the user.
        if result == "error" {
            logger.warning("shared tier: Redis refused a command", metadata: ["operation": "\(operation)", "error": "\(summary)"])
        }
        throw SharedTierUnavailable(reason: "Redis answered \(summary) to \(operation)")
    }

    /// How a command's outcome is counted: `ok`; `refused` when Redis refused the user's credentials or permissions
    /// (`WRONGPASS`, `NOAUTH`, `NOPERM`: in `shared.authErrors`, which the pool counts, and not in `shared.errors`);
    /// else `error`.
    static func result(_ outcome: Result<RedisReply, RedisError>) -> String {
        switch outcome {
        case .success(let reply): reply.errorSummary == nil ? "ok" : reply.isRefusal ? "refused" : "error"
        case .failure(.refused): "refused"
        case .failure(.unavailable): "error"
        }
    }

    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return String(generator.next() as UInt64, radix: 36) + String(generator.next() as UInt64, radix: 36)
    }
}
