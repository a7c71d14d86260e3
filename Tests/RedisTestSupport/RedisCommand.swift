import Redis

/// A command of the test's own to `redis`, on a pool of its own (one connection, closed afterwards). The bound is
/// generous: one script of the tests writes 100,000 log entries, which on a loaded 2-core machine took over 2 s.
public func redisCommand(
    _ redis: RedisServerProcess, _ arguments: [[UInt8]], timeout: Duration = .seconds(30)
) async throws -> RedisReply {
    let pool = RedisCommandPool(endpoint: redis.endpoint, timeout: timeout, size: 1)
    defer { pool.shutdown() }
    return try await pool.command(arguments)
}

/// The same with text arguments.
public func redisCommand(
    _ redis: RedisServerProcess, _ arguments: String..., timeout: Duration = .seconds(30)
) async throws -> RedisReply {
    try await redisCommand(redis, arguments.map { Array($0.utf8) }, timeout: timeout)
}
