import NIOConcurrencyHelpers
import TestSupport

extension RedisServerProcess: StoppableService {}

/// The servers a test started, each stopped by its PID when the group stops.
public final class RedisServerGroup: StoppableService {
    private let servers = NIOLockedValueBox<[RedisServerProcess]>([])

    public init() {}

    /// A server started with the command line `arguments(port)` makes (see `RedisServerProcess.start`).
    public func start(
        readyMarker: String = "Ready to accept connections", arguments: (Int) throws -> [String]
    ) async throws -> RedisServerProcess {
        let server = try await RedisServerProcess.start(readyMarker: readyMarker, arguments: arguments)
        servers.withLockedValue { $0.append(server) }
        return server
    }

    /// A plain server as `RedisServerProcess.start()` makes it, plus `extra` arguments.
    public func start(_ extra: [String] = []) async throws -> RedisServerProcess {
        try await start { port in RedisServerProcess.standardArguments(port: port) + extra }
    }

    /// Stops every server started so far (each server's `stop()` is idempotent).
    public func stop() async {
        for server in servers.withLockedValue({ $0 }) { await server.stop() }
    }
}

/// Runs `body` against a fresh redis-server, stopped (by PID) afterwards whatever happens.
public func withRedisServer<Value>(
    password: String? = nil, isolation: isolated (any Actor)? = #isolation,
    _ body: (RedisServerProcess) async throws -> Value
) async throws -> Value {
    try await withService(RedisServerProcess.start(password: password), isolation: isolation, body)
}

/// Runs `body` with a server group, stopping every server it started afterwards whatever happens.
public func withRedisServers<Value>(
    isolation: isolated (any Actor)? = #isolation, _ body: (RedisServerGroup) async throws -> Value
) async throws -> Value {
    try await withService(RedisServerGroup(), isolation: isolation, body)
}
