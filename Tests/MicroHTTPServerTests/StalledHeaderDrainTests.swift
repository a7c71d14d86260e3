import Glibc
import HTTPRouting
import Testing
@testable import MicroHTTPServer

/// `headerStall` (`--header-stall`): at `maxConnections`, with a connection waiting and none idle, the request
/// whose line and headers have had no byte for that long is closed to admit it, the longest stalled first. A flood
/// trickling a byte every few seconds then holds no slot a new client needs, long before the header timeout; a client
/// sending steadily, however slowly, is never chosen. Both listening paths.
@Suite(.timeLimit(.minutes(10)), .serialized) struct StalledHeaderDrainTests {
    /// 250 bytes of request line and headers.
    static let longRequest = HeaderTimeoutTests.slowRequest
    static var router: Router { HeaderTimeoutTests.router }

    @Test(arguments: [1, 2])
    func atTheLimitATricklingRequestIsClosedForANewClientAndASteadySlowOneIsNot(pollingThreads: Int) async throws {
        // The header timeout (30 s) is far off: only the stall can free a slot in time, and the steady client's 5 s
        // of trickling stay inside it however a loaded machine slows its pace.
        let configuration = MicroHTTPServerConfiguration.test(
            pollingThreads: pollingThreads, maxConnections: 2, headerTimeout: .seconds(30),
            headerStall: .seconds(2))
        try await withLiveServer(configuration, router: Self.router) { port, _ in
            // Both slots: a byte every 6 s (stalled two thirds of the time), and a byte every 20 ms (5 s for its
            // 250 bytes; never stalled for anything like 2 s: a 500 ms stall once caught it when the whole suite ran
            // in parallel on 2 cores and starved its thread). Connected first, so the server takes them up first.
            // Each sends its first byte before the new client comes: a connection with no byte yet is idle, and idle
            // ones go first (a slow start of the trickling threads under ThreadSanitizer once let that happen).
            let first = Array(Self.longRequest.utf8.prefix(1))
            let rest = String(Self.longRequest.dropFirst())
            let tricklingSocket = try await RawHTTPClient.connected(port: port, sending: first)
            let steadySocket = try await RawHTTPClient.connected(port: port, sending: first)
            // On threads of their own from here: child tasks started late on a busy pool once made the steady
            // client look stalled.
            let trickling = RawHTTPClient.startTrickle(on: tricklingSocket, rest, pace: .seconds(6))
            let steady = RawHTTPClient.startTrickle(on: steadySocket, rest, pace: .milliseconds(20))

            // A new client waits in the backlog until the trickling request has stalled 2 s: admitted soon after,
            // not at the header timeout (30 s; the bound is half of it, far above the 2 s, for a loaded machine).
            let (admitted, took) = try await RawHTTPClient.timedExchange(
                port: port, "GET /now HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            #expect(admitted.status == 200)
            #expect(took < .seconds(15))

            let closed = try await trickling.value
            #expect(closed.received.isEmpty)
            let closedAfter = try #require(closed.closedAfter)
            #expect(closedAfter < .seconds(15))
            let served = try await steady.value
            #expect(served.closedAfter == nil)
            #expect(String(decoding: served.received, as: UTF8.self).hasPrefix("HTTP/1.1 200 "))
        }
    }

    @Test(arguments: [1, 2])
    func withTheStallAtZeroARequestUnderWayIsNeverClosedForANewClient(pollingThreads: Int) async throws {
        // The holder keeps the only slot until the header timeout closes it, after 2 s.
        try await HeaderTimeoutTests.withTheOnlySlotHeld(pollingThreads: pollingThreads, headerTimeout: .seconds(2)) {
            port, holder in
            let (admitted, took) = try await RawHTTPClient.timedExchange(
                port: port, "GET /now HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            #expect(admitted.status == 200)
            #expect(took >= .milliseconds(1500))
            #expect(await RawHTTPClient.closedByServer(holder))
        }
    }
}
