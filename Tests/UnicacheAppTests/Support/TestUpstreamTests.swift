import Foundation
import Logging
import TestSupport
import Testing
import UnifiedCache

@testable import UnicacheApp

/// The test support itself: latches under contention and an upstream that shuts down mid-request.
@Suite(.timeLimit(.minutes(10))) struct TestUpstreamTests {
    @Test func manyWaitersAreAllReleasedByOneOpen() async throws {
        let latch = Latch()
        let released = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<200 {
                group.addTask {
                    await latch.wait()
                    return 1
                }
            }
            group.addTask {
                latch.open()
                return 0
            }
            return await group.reduce(0, +)
        }
        #expect(released == 200)
        await latch.wait()  // an open latch does not block
    }

    @Test func cancelledWaitersAreReleasedAndTheLatchStaysClosed() async throws {
        let latch = Latch()
        let cancelled = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<100 {
                group.addTask {
                    await latch.wait()
                    return Task.isCancelled ? 1 : 0
                }
            }
            group.cancelAll()
            return await group.reduce(0, +)
        }
        #expect(cancelled == 100)
        #expect(!latch.isOpen)
    }

    @Test func shutdownEndsAHeldRequest() async throws {
        let upstream = TestUpstream()
        let port = try await upstream.start()
        let client = UpstreamClient(timeout: .seconds(30), logger: HTTPUpstreamFetcherTests.logger)
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
        let error = await fetch.value
        await client.shutdown()
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
}
