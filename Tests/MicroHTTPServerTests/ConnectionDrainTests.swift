import Glibc
import HTTPRouting
import Testing
@testable import MicroHTTPServer

/// At `maxConnections` (contract §1) the connection idle the longest is closed to admit a new one (nginx's
/// ngx_drain_connections); idle means connected with no request in progress: kept alive after an answer, or
/// never having sent a byte. A connection with a request under way is never chosen. Both listening paths.
@Suite(.timeLimit(.minutes(10)), .serialized) struct ConnectionDrainTests {
    static var router: Router {
        var router = Router()
        router.getNow()
        return router
    }

    /// Connects and sends the start of a request (its line, not all of its headers).
    static func requestUnderWay(port: Int) async throws -> Int32 {
        try await RawHTTPClient.connected(port: port, sending: Array("GET /now HTTP/1.1\r\nHost: 127".utf8))
    }

    static func finish(_ socket: Int32) async throws -> RawResponse {
        try await RawHTTPClient.response(socket, after: ".0.0.1\r\n\r\n")
    }

    /// A new connection's request is answered at once, not left in the backlog until an idle connection times out
    /// (30 s here): within 10 s, a bound far from both that a loaded machine does not reach. Timed on the client's own
    /// thread: the ThreadSanitizer run once measured 5.75 s across the awaits, with two loaded CPUs and a cooperative
    /// pool held by other tests' blocking calls.
    static func expectAdmitted(port: Int) async throws {
        let (admitted, took) = try await RawHTTPClient.timedExchange(
            port: port, "GET /now HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        #expect(admitted.status == 200)
        #expect(took < .seconds(10))
    }

    @Test(arguments: [1, 2])
    func atTheLimitTheConnectionIdleTheLongestIsClosedToAdmitANewOne(pollingThreads: Int) async throws {
        // No stalled-header drain (StalledHeaderDrainTests has it): a starved polling thread that has not yet
        // stamped `older` and `newer` idle must not make `busy`, stalled past a second, the one to go.
        let configuration = MicroHTTPServerConfiguration.test(
            pollingThreads: pollingThreads, maxConnections: 3, headerStall: .zero)
        try await withLiveServer(configuration, router: Self.router) { port, _ in
            // The oldest connection is not idle: its request is under way.
            let busy = try await Self.requestUnderWay(port: port)
            defer { close(busy) }
            let older = try await RawHTTPClient.keptAlive(port: port)
            defer { close(older) }
            let newer = try await RawHTTPClient.keptAlive(port: port)
            defer { close(newer) }

            try await Self.expectAdmitted(port: port)
            // With one polling thread `older`'s answer is stamped idle before `newer` is served. With two, the
            // stamp is taken on `older`'s thread after its last byte is sent (MHD's completion), which a starved
            // thread can take after `newer`'s whole exchange on the other one: then `newer` is the one idle the
            // longest, as far as the server can know. Either way exactly one idle connection goes, never the busy one.
            // Both are watched at once: waiting out one socket's receive timeout first would outlast `busy`'s header
            // timeout.
            let closed = await RawHTTPClient.closedByServer(oneOf: [older, newer])
            #expect(closed.count == 1)
            if pollingThreads == 1 { #expect(closed == [older]) }
            let olderClosed = closed.contains(older)
            // The request under way and the other idle connection were left alone.
            #expect(try await Self.finish(busy).status == 200)
            let survivor = olderClosed ? newer : older
            let again = try await RawHTTPClient.response(survivor, after: "GET /now HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            #expect(again.text == "now")
        }
    }

    @Test(arguments: [1, 2])
    func aConnectionThatNeverSentAByteIsIdle(pollingThreads: Int) async throws {
        let configuration = MicroHTTPServerConfiguration.test(pollingThreads: pollingThreads, maxConnections: 2)
        try await withLiveServer(configuration, router: Self.router) { port, _ in
            let silent = try await RawHTTPClient.connected(port: port)
            defer { close(silent) }
            let busy = try await Self.requestUnderWay(port: port)
            defer { close(busy) }

            try await Self.expectAdmitted(port: port)
            #expect(await RawHTTPClient.closedByServer(silent))
            #expect(try await Self.finish(busy).status == 200)
        }
    }
}
