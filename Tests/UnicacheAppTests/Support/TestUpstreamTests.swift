import Clocks
import Foundation
import NIOPosix
import Logging
@testable import Settings
import TestSupport
import Testing
import UnifiedCache

@testable import UnicacheApp
@testable import UpstreamHTTP

/// The test support itself: latches under contention and an upstream that shuts down mid-request.
@Suite(.timeLimit(.minutes(10))) struct TestUpstreamTests {
    /// `count` tasks that wait on `latch` and then count 1 if `counts` (asked after the wait); `release` lets them go.
    /// Returns the sum.
    func waiters(
        _ count: Int, on latch: Latch, counting counts: @escaping @Sendable () -> Bool,
        releasedBy release: (inout TaskGroup<Int>) -> Void
    ) async -> Int {
        await withTaskGroup(of: Int.self) { group in
            for _ in 0..<count {
                group.addTask {
                    await latch.wait()
                    return counts() ? 1 : 0
                }
            }
            release(&group)
            return await group.reduce(0, +)
        }
    }

    @Test func manyWaitersAreAllReleasedByOneOpen() async throws {
        let latch = Latch()
        let released = await waiters(200, on: latch, counting: { true }) { group in
            group.addTask {
                latch.open()
                return 0
            }
        }
        #expect(released == 200)
        await latch.wait()  // an open latch does not block
    }

    @Test func cancelledWaitersAreReleasedAndTheLatchStaysClosed() async throws {
        let latch = Latch()
        let cancelled = await waiters(100, on: latch, counting: { Task.isCancelled }) { $0.cancelAll() }
        #expect(cancelled == 100)
        #expect(!latch.isOpen)
    }

    @Test func shutdownEndsAHeldRequest() async throws {
        let upstream = TestUpstream()
        let port = try await upstream.start()
        let error = try await withHTTPClient(UpstreamClient(timeout: .seconds(30), clock: SystemWallClock(), ticker: ManualClock(), logger: HTTPUpstreamFetcherTests.logger)) {
            client in
            let fetcher = try client.fetcher(baseURL: TestUpstream.baseURL(port: port))
            upstream.set("/held", .gated(Latch(), .json("{}")))
            let fetch = Task { () -> FetchError? in
                do throws(FetchError) {
                    _ = try await fetcher.fetch(FetchRequest(key: "k", namespace: "n", user: nil, path: "/held"))
                    return nil
                } catch {
                    return error
                }
            }
            await upstream.waitForRequests("/held", count: 1)
            await upstream.shutdown()
            return await fetch.value
        }
        guard case .unavailable = error else {
            Issue.record("expected .unavailable, got \(String(describing: error))")
            return
        }
    }

    @Test func unconfiguredPathsEchoTheirCount() async throws {
        try await HTTPUpstreamFetcherTests.withUpstream { upstream, fetcher in
            let request = FetchRequest(key: "k", namespace: "n", user: nil, path: "/any", query: [QueryItem("a", "1")])
            _ = try await fetcher.fetch(request)
            let second = try await fetcher.fetch(request)
            #expect(second.body == Array(#"{"path":"/any","request":2}"#.utf8))
            #expect(upstream.requestCount("/any") == 2)
            #expect(upstream.requestTargets == ["/any?a=1", "/any?a=1"])
        }
    }

    /// Connections that arrive while the upstream stops are closed, not dropped: NIO traps a connection wrapper
    /// dropped unserved once its channel turns active (seen once under a loaded full suite). Many rounds of
    /// connects racing a shutdown; the process survives and every round stops.
    @Test func connectionsArrivingWhileItStopsAreClosed() async throws {
        for _ in 0..<40 {
            let upstream = TestUpstream()
            let port = try await upstream.start()
            await withTaskGroup(of: Void.self) { group in
                for _ in 0..<16 {
                    group.addTask {
                        _ = try? await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                            .connect(host: "127.0.0.1", port: port).flatMap { $0.close() }.get()
                    }
                }
                group.addTask { await upstream.shutdown() }
            }
        }
    }
}
