import RedisClient
import RedisTestSupport
import Testing

/// Runs `body` against a fresh redis-server, stopped (by PID) afterwards whatever happens.
func withRedisServer<Result>(
    password: String? = nil,
    isolation: isolated (any Actor)? = #isolation,
    _ body: (RedisServerProcess) async throws -> Result
) async throws -> Result {
    let server = try await RedisServerProcess.start(password: password)
    do {
        let result = try await body(server)
        await server.stop()
        return result
    } catch {
        await server.stop()
        throw error
    }
}

extension Array where Element == UInt8 {
    init(_ text: String) {
        self = Array(text.utf8)
    }
}

/// The message of a `.unavailable` error.
func reason(_ error: RedisError?) -> String? {
    guard case .unavailable(let reason)? = error else { return nil }
    return reason
}
