import Foundation
import NIOConcurrencyHelpers
import RedisNIO
import RedisTestSupport
import Testing

/// The servers a test started, each stopped by its PID when the test ends, whether it passed or not.
final class ServerGroup: Sendable {
    private let servers = NIOLockedValueBox<[RedisServerProcess]>([])

    func start(
        readyMarker: String = "Ready to accept connections", arguments: (Int) throws -> [String]
    ) async throws -> RedisServerProcess {
        let server = try await RedisServerProcess.start(readyMarker: readyMarker, arguments: arguments)
        servers.withLockedValue { $0.append(server) }
        return server
    }

    /// A plain server as `RedisServerProcess.start()` makes it, plus `extra` arguments.
    func start(_ extra: [String] = []) async throws -> RedisServerProcess {
        try await start { port in RedisServerProcess.standardArguments(port: port) + extra }
    }

    func stopAll() async {
        for server in servers.withLockedValue({ $0 }) { await server.stop() }
    }
}

/// Runs `body` with a server group, stopping every server it started afterwards whatever happens.
func withServers<Result>(
    isolation: isolated (any Actor)? = #isolation, _ body: (ServerGroup) async throws -> Result
) async throws -> Result {
    let group = ServerGroup()
    do {
        let result = try await body(group)
        await group.stopAll()
        return result
    } catch {
        await group.stopAll()
        throw error
    }
}

/// A plain connection to a test server (generous bounds: CI runs on 2 busy cores).
func configuration(_ server: RedisServerProcess, timeout: Duration = .seconds(5)) -> RedisConnectionConfiguration {
    RedisConnectionConfiguration(host: "127.0.0.1", port: server.port, commandTimeout: timeout, connectTimeout: .seconds(5))
}

/// A fresh temporary folder for config files and certificates.
func temporaryFolder() throws -> URL {
    let folder = FileManager.default.temporaryDirectory.appendingPathComponent("unicache-redisnio-\(UUID().uuidString)")
    try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    return folder
}
