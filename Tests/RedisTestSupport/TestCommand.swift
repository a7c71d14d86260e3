import Redis

/// A command of the test's own to `redis`, on a node client of its own (one connection, closed afterwards). The bound
/// is generous: one script of the tests writes 100,000 log entries, which on a loaded 2-core machine took over 2 s.
public func redisCommand(
    _ redis: RedisServerProcess, _ command: RedisCommand, timeout: Duration = .seconds(30)
) async throws -> RedisReply {
    let node = RedisNodeClient(endpoint: redis.endpoint, timeout: timeout, clock: ContinuousClock(), size: 1)
    defer { node.shutdown() }
    return try await node.send(command)
}

/// The same with text arguments: the command's name first.
public func redisCommand(
    _ redis: RedisServerProcess, _ name: String, _ arguments: String..., timeout: Duration = .seconds(30)
) async throws -> RedisReply {
    try await redisCommand(redis, RedisCommand(name, arguments: arguments.map { Array($0.utf8) }), timeout: timeout)
}

/// The same with binary arguments: the command's name first.
public func redisCommand(
    _ redis: RedisServerProcess, _ arguments: [[UInt8]], timeout: Duration = .seconds(30)
) async throws -> RedisReply {
    guard let name = arguments.first else { throw RedisError.unexpectedReply("a command needs a name") }
    let command = RedisCommand(String(decoding: name, as: UTF8.self), arguments: Array(arguments.dropFirst()))
    return try await redisCommand(redis, command, timeout: timeout)
}
