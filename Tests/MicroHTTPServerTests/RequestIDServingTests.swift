import CMicroHTTPD
#if canImport(Glibc)
import Glibc
#endif
import HTTPRouting
import Logging
import TestSupport
import Testing
@testable import MicroHTTPServer

/// CONTRACT §7.4 at the server: every answer carries the request's id, the client's when valid.
@Suite(.timeLimit(.minutes(10)), .serialized) struct RequestIDServingTests {
    static func configuration() -> MicroHTTPServerConfiguration {
        var configuration = MicroHTTPServerConfiguration.test(maxBodyBytes: 16)
        configuration.requestIDs = true
        return configuration
    }

    /// A reusable response on both paths, and an async route that answers with the id it saw, as the request
    /// and as the task-local value its log lines read.
    static func router() -> Router {
        let shared = Response(status: 200, headers: ["X-Shared": "yes"], body: Array(#"{"n":1}"#.utf8)).reusable()
        var router = Router()
        router.handle(.get, "/shared") { _ in .now(shared) }
        router.get("/async-shared") { _ in shared }
        router.get("/seen") { request in
            .text("\(request.id?.value ?? "-") \(RequestID.current?.value ?? "-")")
        }
        router.handle(.get, "/seen-now") { request in
            .now(.text("\(request.id?.value ?? "-") \(RequestID.current?.value ?? "-")"))
        }
        return router
    }

    static func get(_ port: Int, _ path: String, id: String? = nil) async throws -> RawResponse {
        let header = id.map { "X-Request-ID: \($0)\r\n" } ?? ""
        return try await RawHTTPClient.exchange(port: port, "GET \(path) HTTP/1.1\r\nHost: a\r\n\(header)\r\n")
    }

    @Test func aValidClientIDIsEchoedOnEveryPathAndSeenByTheHandler() async throws {
        try await withLiveServer(Self.configuration(), router: Self.router()) { port, _ in
            for path in ["/shared", "/async-shared", "/shared", "/missing"] {
                let response = try await Self.get(port, path, id: "client-7")
                #expect(response.headers["X-Request-ID"] == "client-7", "\(path)")
            }
            #expect(try await Self.get(port, "/seen", id: "abc").text == "abc abc")
            #expect(try await Self.get(port, "/seen-now", id: "def").text == "def def")
        }
    }

    @Test func copiesOfOneReusableResponseCarryTheirOwnIDsAndTheSameBody() async throws {
        try await withLiveServer(Self.configuration(), router: Self.router()) { port, _ in
            var ids: Set<String> = []
            for path in ["/shared", "/async-shared", "/shared", "/async-shared"] {
                let response = try await Self.get(port, path)
                #expect(response.status == 200 && response.text == #"{"n":1}"#)
                #expect(response.headers["X-Shared"] == "yes" && response.headers["Content-Length"] == "7")
                let id = try #require(response.headers["X-Request-ID"])
                #expect(RequestID(validating: id) != nil)
                ids.insert(id)
            }
            #expect(ids.count == 4)
        }
    }

    /// The copies of a reusable response that carry ids are lent per request and reused once MHD is done with
    /// them: four keep-alive connections, 50 answers each, every one with its own id (no copy's id leaks into
    /// another answer), and at most one copy per connection kept afterwards.
    @Test func copiesAreReusedAndEachAnswerCarriesItsOwnID() async throws {
        let shared = Response(status: 200, headers: ["X-Shared": "yes"], body: Array(#"{"n":1}"#.utf8)).reusable()
        var router = Router()
        router.handle(.get, "/shared") { _ in .now(shared) }
        try await withLiveServer(Self.configuration(), router: router) { port, _ in
            let mismatches = await withTaskGroup(of: [String].self) { group in
                for connection in 0..<4 {
                    group.addTask {
                        await RawHTTPClient.onThread {
                            var mismatches: [String] = []
                            do {
                                let socket = try RawHTTPClient.connect(port: port)
                                defer { close(socket) }
                                for number in 0..<50 {
                                    let id = "c\(connection)-\(number)"
                                    try RawHTTPClient.send(
                                        socket, Array("GET /shared HTTP/1.1\r\nHost: a\r\nX-Request-ID: \(id)\r\n\r\n".utf8))
                                    let response = try RawHTTPClient.readResponse(socket, expectBody: true, checkClosed: false)
                                    let seen = response.headers["X-Request-ID"] ?? "none"
                                    if seen != id || response.text != #"{"n":1}"# || response.headers["X-Shared"] != "yes" {
                                        mismatches.append("\(id): \(seen) \(response.text)")
                                    }
                                }
                            } catch {
                                mismatches.append("c\(connection): \(error)")
                            }
                            return mismatches
                        }
                    }
                }
                return await group.reduce(into: []) { $0 += $1 }
            }
            #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
        }
        // The server has stopped (its polling thread is gone): every request completed and gave its copy back.
        let prepared = try #require(shared.memo?.current(as: PreparedResponse.self))
        #expect((1...4).contains(prepared.spareCount), "\(prepared.spareCount) copies kept for 4 connections")
    }


    func anInvalidClientIDIsReplaced(value: String) async throws {
        try await withLiveServer(Self.configuration(), router: Self.router()) { port, _ in
            let response = try await Self.get(port, "/seen", id: value)
            let id = try #require(response.headers["X-Request-ID"])
            #expect(id != value && RequestID(validating: id) != nil)
            #expect(response.text == "\(id) \(id)")
        }
    }

    @Test func theServersOwnAnswersCarryTheIDToo() async throws {
        let store = CapturingLogHandler.Store()
        let logger = CapturingLogHandler.logger(store)
        try await withLiveServer(Self.configuration(), router: Self.router(), logger: logger) { port, _ in
            // 413 before the body: answered by the server, not the router.
            let tooLarge = try await RawHTTPClient.exchange(
                port: port,
                "POST /seen HTTP/1.1\r\nHost: a\r\nX-Request-ID: big-1\r\nContent-Length: 100\r\n\r\n")
            #expect(tooLarge.status == 413)
            #expect(tooLarge.headers["X-Request-ID"] == "big-1")
        }
        // And the server's own log line about it.
        let lines = store.requestIDs
        #expect(lines.contains { $0.message == "rejected before the body" && $0.requestID == "big-1" })
    }

    @Test func withoutRequestIDsNoHeaderIsAdded() async throws {
        try await withLiveServer(.test(), router: Self.router()) { port, _ in
            for path in ["/shared", "/async-shared"] {
                let response = try await Self.get(port, path, id: "client-7")
                #expect(response.headers["X-Request-ID"] == nil)
            }
            #expect(try await Self.get(port, "/seen", id: "abc").text == "- -")
        }
    }

    /// A copy given back and lent again carries the new id: written over the old one's bytes when as long (the
    /// same header), the header replaced when not; either way the copy has one `X-Request-ID` and the template's
    /// headers.
    @Test func aLentCopysIDIsRewrittenInPlaceWhenAsLongAndReplacedOtherwise() throws {
        let response = Response(status: 200, headers: ["X-Shared": "yes"], body: Array(#"{"n":1}"#.utf8))
        let prepared = try #require(PreparedResponse(response))
        func lend(_ id: String) throws -> Spare {
            let requestID = try #require(RequestID(validating: id))
            return try #require(prepared.lend(carrying: requestID))
        }
        func id(of spare: Spare) -> String? {
            MHD_get_response_header(spare.copy, RequestID.headerName).map { String(cString: $0) }
        }
        let template = MHD_get_response_headers(prepared.pointer, nil, nil)

        let first = try lend("aaaa")
        #expect(id(of: first) == "aaaa")
        prepared.giveBack(first)
        let second = try lend("bbbb")
        #expect(second.copy == first.copy && id(of: second) == "bbbb")
        #expect(MHD_get_response_headers(second.copy, nil, nil) == template + 1)
        prepared.giveBack(second)
        let third = try lend("ccccc")
        #expect(third.copy == first.copy && id(of: third) == "ccccc")
        #expect(MHD_get_response_headers(third.copy, nil, nil) == template + 1)
        #expect(MHD_get_response_header(third.copy, "X-Shared").map { String(cString: $0) } == "yes")
        prepared.giveBack(third)
        #expect(prepared.spareCount == 1)
    }
}
