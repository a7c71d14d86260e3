import Foundation
import Logging
import Testing
import UnifiedCache

@testable import UnicacheApp

/// The test support itself: gates under contention and an upstream that shuts down mid-request.
@Suite(.timeLimit(.minutes(10))) struct TestUpstreamTests {
    @Test func manyWaitersAreAllReleasedByOneOpen() async throws {
        let gate = Gate()
        let released = try await withThrowingTaskGroup(of: Int.self) { group in
            for _ in 0..<200 {
                group.addTask {
                    try await gate.wait()
                    return 1
                }
            }
            group.addTask {
                gate.open()
                return 0
            }
            return try await group.reduce(0, +)
        }
        #expect(released == 200)
        try await gate.wait()  // an open gate does not block
    }

    @Test func cancelledWaitersThrowAndOthersStillPass() async throws {
        let gate = Gate()
        let cancelled = await withTaskGroup(of: Int.self) { group in
            for _ in 0..<100 {
                group.addTask {
                    do {
                        try await gate.wait()
                        return 0
                    } catch {
                        return 1
                    }
                }
            }
            group.cancelAll()
            return await group.reduce(0, +)
        }
        #expect(cancelled == 100)
        #expect(!gate.isOpen)
    }

    @Test func shutdownEndsAHeldRequest() async throws {
        let upstream = TestUpstream()
        let port = try await upstream.start()
        let client = UpstreamClient(timeout: .seconds(30), logger: HTTPUpstreamFetcherTests.logger)
        let fetcher = try client.fetcher(baseURL: TestUpstream.baseURL(port: port))
        upstream.set("/held", .gated(Gate(), .json("{}")))
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
