import HTTPRouting
import Logging
import ServiceLifecycle
import TestSupport
import Testing
@testable import MicroHTTPServer

let quietLogger = Logger(label: "test") { _ in SwiftLogNoOpLogHandler() }

extension MicroHTTPServerConfiguration {
    /// Port 0 on loopback.
    static func test(
        requestTimeout: Duration = .seconds(30), maxBodyBytes: Int = 1 << 20, maxPendingRequests: Int = 4096,
        shutdownTimeout: Duration = .seconds(10), pollingThreads: Int = 1, maxConnections: Int = 4096,
        maxConnectionsPerIP: Int = 1024, headerTimeout: Duration = .seconds(10), headerStall: Duration = .seconds(1)
    ) -> MicroHTTPServerConfiguration {
        MicroHTTPServerConfiguration(
            host: "127.0.0.1", port: 0, maxConnections: maxConnections, maxConnectionsPerIP: maxConnectionsPerIP,
            headerTimeout: headerTimeout, headerStall: headerStall, requestTimeout: requestTimeout, maxBodyBytes: maxBodyBytes,
            maxPendingRequests: maxPendingRequests, shutdownTimeout: shutdownTimeout, pollingThreads: pollingThreads)
    }
}

/// Runs `body` against a live server in a ServiceGroup, then shuts it down gracefully and waits for run().
func withLiveServer(
    _ configuration: MicroHTTPServerConfiguration = .test(),
    router: Router,
    ticker: any Clock<Duration> = ContinuousClock(),
    logger: Logger = quietLogger,
    _ body: (_ port: Int, _ server: MicroHTTPServer) async throws -> Void
) async throws {
    let server = MicroHTTPServer(configuration: configuration, responder: router, ticker: ticker, logger: logger)
    let port = try server.start()
    let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: [server], logger: quietLogger))
    try await withThrowingTaskGroup(of: Void.self) { tasks in
        tasks.addTask { try await group.run() }
        do {
            try await body(port, server)
        } catch {
            await group.triggerGracefulShutdown()
            throw error
        }
        await group.triggerGracefulShutdown()
        try await tasks.waitForAll()
    }
}

/// The answer of a live server with `router` (and `configuration`) to `request`, sent on a connection of its own.
func answer(
    to request: String, router: Router, _ configuration: MicroHTTPServerConfiguration = .test()
) async throws -> RawResponse {
    var response: RawResponse?
    try await withLiveServer(configuration, router: router) { port, _ in
        response = try await RawHTTPClient.exchange(port: port, request)
    }
    return try #require(response)
}

extension Router {
    /// `GET path` answers "held" once `latch` opens, after telling `started` it is in.
    mutating func getHeld(_ path: String, started: Signals<Void>, until latch: Latch) {
        get(path) { _ in
            started.signal()
            await latch.wait()
            return .text("held")
        }
    }

    /// `GET /now` answers "now" on the polling thread (`.now`).
    mutating func getNow() {
        handle(.get, "/now") { _ in .now(.text("now")) }
    }
}
