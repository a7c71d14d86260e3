import Glibc
import HTTPRouting
import Testing
@testable import MicroHTTPServer

/// `headerTimeout` (contract §1, `--header-timeout`): a request whose line and headers are not complete that long
/// after its first byte is closed, however slowly they trickle in; libmicrohttpd's own timeout restarts with every
/// byte. The clock starts at the first byte: a client that thinks before it sends is not hurried. Both listening
/// paths: one polling thread and a pool.
@Suite(.timeLimit(.minutes(10)), .serialized) struct HeaderTimeoutTests {
    /// 250 bytes of request line and headers: 25 s at 100 ms a byte.
    static let slowRequest = "GET /now HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Pad: \(String(repeating: "a", count: 210))\r\n\r\n"

    static var router: Router {
        var router = Router()
        router.getNow()
        return router
    }

    /// A server of one connection slot that closes no stalled request for a newcomer (`headerStall` zero), the slot
    /// held by a request that stops after its first bytes (`holder`): the header timeout closes it, that long after.
    static func withTheOnlySlotHeld(
        pollingThreads: Int, headerTimeout: Duration, _ body: (_ port: Int, _ holder: Int32) async throws -> Void
    ) async throws {
        let configuration = MicroHTTPServerConfiguration.test(
            pollingThreads: pollingThreads, maxConnections: 1, headerTimeout: headerTimeout, headerStall: .zero)
        try await withLiveServer(configuration, router: router) { port, _ in
            let holder = try await RawHTTPClient.connected(
                port: port, sending: Array("GET /now HTTP/1.1\r\nHost: 127".utf8))
            defer { close(holder) }
            try await body(port, holder)
        }
    }

    @Test(arguments: [1, 2])
    func aRequestTricklingInIsClosedAtTheHeaderTimeoutWhileOthersAreServed(pollingThreads: Int) async throws {
        let configuration = MicroHTTPServerConfiguration.test(pollingThreads: pollingThreads, headerTimeout: .seconds(1))
        try await withLiveServer(configuration, router: Self.router) { port, _ in
            async let trickle = RawHTTPClient.trickle(port: port, Self.slowRequest, pace: .milliseconds(100))
            let normal = try await RawHTTPClient.get(port: port, "/now")
            #expect(normal.status == 200)
            let seen = try await trickle
            // Closed without an answer while the client was still sending, and not before the timeout.
            #expect(seen.received.isEmpty)
            #expect(seen.sent < Self.slowRequest.utf8.count)
            let closedAfter = try #require(seen.closedAfter)
            #expect(closedAfter >= .seconds(1))
        }
    }

    @Test(arguments: [1, 2])
    func headersThatArriveWithinTheTimeoutAreServed(pollingThreads: Int) async throws {
        // 10 s: the timeout must not fire, and a loaded machine slows the client's pace.
        let configuration = MicroHTTPServerConfiguration.test(pollingThreads: pollingThreads, headerTimeout: .seconds(10))
        try await withLiveServer(configuration, router: Self.router) { port, _ in
            // About 1.8 s of trickling, within the 10 s.
            let seen = try await RawHTTPClient.trickle(
                port: port, "GET /now HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", pace: .milliseconds(50))
            #expect(seen.closedAfter == nil)
            #expect(String(decoding: seen.received, as: UTF8.self).hasPrefix("HTTP/1.1 200 "))
        }
    }

    /// A request that waits in the listen backlog (the only connection slot is taken) does not spend its time there:
    /// the clock starts when the server takes the connection up, as nginx starts its header timer at accept.
    @Test(arguments: [1, 2])
    func timeInTheListenBacklogDoesNotCount(pollingThreads: Int) async throws {
        // The holder keeps the only slot until the header timeout closes it, after 4 s.
        try await Self.withTheOnlySlotHeld(pollingThreads: pollingThreads, headerTimeout: .seconds(4)) { port, holder in
            // Its first bytes (not yet a request line) wait in the backlog for those 4 s.
            let waiting = try await RawHTTPClient.connected(port: port, sending: Array("GET /n".utf8))
            defer { close(waiting) }
            // The rest comes half a timeout after the holder is closed (measured from that close, on one thread): two
            // seconds of margin either way. A clock counting the backlog has closed it by then (within a tenth of the
            // timeout of taking it up); the one starting at accept leaves it two seconds more.
            let answer = try await RawHTTPClient.exchange(
                on: waiting, afterTheServerCloses: holder, pause: .seconds(2),
                then: "ow HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            #expect(answer.status == 200)
        }
    }

    /// Idle time is the idle timeout's, before the first request and between requests.
    @Test(arguments: [1, 2])
    func theClockStartsAtTheFirstByteNotWhenTheConnectionFellIdle(pollingThreads: Int) async throws {
        let configuration = MicroHTTPServerConfiguration.test(
            pollingThreads: pollingThreads, headerTimeout: .seconds(1))
        try await withLiveServer(configuration, router: Self.router) { port, _ in
            let request = "GET /now HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"
            let afterThinking = try await RawHTTPClient.exchange(
                port: port, first: nil, pause: .milliseconds(2500), then: request)
            #expect(afterThinking.status == 200)
            let nextAfterThinking = try await RawHTTPClient.exchange(
                port: port, first: request, pause: .milliseconds(2500), then: request)
            #expect(nextAfterThinking.status == 200)
        }
    }
}
