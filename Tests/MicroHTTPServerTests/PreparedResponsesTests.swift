import HTTPRouting
import TestSupport
import Testing
@testable import MicroHTTPServer

/// The server's own cache of prepared responses (`PreparedResponses`, one `PreparedTable` per polling thread),
/// keyed by the `ReuseIdentity` a reusable response carries.
@Suite(.timeLimit(.minutes(10))) struct PreparedResponsesTests {
    @Test func aFormIsMadeAtTheSecondSendingKeptAndReleasedWhenAnotherResponseTakesItsSlot() throws {
        let table = PreparedTable(slots: 1)
        let first = Response.json(#"{"n":1}"#).reusable()
        let identity = try #require(first.reuseIdentity)
        // Sent once: built with its answer, not prepared.
        #expect(table.form(of: first, identity: identity) == nil)
        weak var released: PreparedResponse?
        do {
            let form = try #require(table.form(of: first, identity: identity))
            released = form
            #expect(table.form(of: first, identity: identity) === form)
            #expect(table.forms.count == 1)
        }
        #expect(released != nil)
        let other = Response.text("other").reusable()
        #expect(table.form(of: other, identity: try #require(other.reuseIdentity)) == nil)
        #expect(released == nil)
        #expect(table.forms.isEmpty)
    }

    @Test func aReusableResponseServedTwiceOnTheWireIsTheSameBytesAndGoesWithTheServer() async throws {
        let shared = Response(status: 200, headers: ["X-Shared": "yes"], body: Array(#"{"n":2}"#.utf8)).reusable()
        var router = Router()
        router.handle(.get, "/shared") { _ in .now(shared) }
        weak var released: PreparedResponse?
        do {
            var served: MicroHTTPServer?
            try await withLiveServer(router: router) { port, server in
                served = server
                let first = try await RawHTTPClient.get(port: port, "/shared")
                let second = try await RawHTTPClient.get(port: port, "/shared")
                let third = try await RawHTTPClient.get(port: port, "/shared")
                for response in [first, second, third] {
                    #expect(response.status == 200 && response.text == #"{"n":2}"#)
                    #expect(response.headers["X-Shared"] == "yes" && response.headers["Content-Length"] == "7")
                }
            }
            let forms = try #require(served).core.prepared.all
            #expect(forms.count == 1)
            released = forms.first
        }
        // The server goes once the last task that held it has ended (its run's, a request's): soon, not at once.
        await waitUntil("the server's prepared forms are released") { released == nil }
    }
}
