import HTTPRouting
import TestSupport
import Testing
@testable import MicroHTTPServer

/// The server's prepared form of a reusable response, kept in the response's memo.
@Suite(.timeLimit(.minutes(10))) struct PreparedResponsesTests {
    @Test func aReusableResponseServedTwiceOnTheWireIsTheSameBytesAndGoesWithTheServer() async throws {
        weak var released: PreparedResponse?
        do {
            let shared = Response(status: 200, headers: ["X-Shared": "yes"], body: Array(#"{"n":2}"#.utf8)).reusable()
            var router = Router()
            router.handle(.get, "/shared") { _ in .now(shared) }
            try await withLiveServer(router: router) { port, _ in
                let first = try await RawHTTPClient.get(port: port, "/shared")
                let second = try await RawHTTPClient.get(port: port, "/shared")
                let third = try await RawHTTPClient.get(port: port, "/shared")
                for response in [first, second, third] {
                    #expect(response.status == 200 && response.text == #"{"n":2}"#)
                    #expect(response.headers["X-Shared"] == "yes" && response.headers["Content-Length"] == "7")
                }
            }
            released = shared.memo?.current(as: PreparedResponse.self)
            #expect(released != nil)
        }
        // Held by the route's response: it goes with the router and the server, once the server's last task (its
        // run's, a request's) has ended: soon, not at once.
        await waitUntil("the prepared form is released with the response") { released == nil }
    }
}
