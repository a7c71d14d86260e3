import Glibc
import HTTPRouting
import Logging
import TestSupport
import Testing
@testable import MicroHTTPServer

@Suite(.timeLimit(.minutes(10)), .serialized) struct ServerBasicsTests {
    static func router() -> Router {
        var router = Router()
        router.handle(.get, "/healthz") { _ in .now(.json(#"{"status":"ok"}"#)) }
        router.get("/echo/{value}") { request in
            .text([request.target, request.pathParameters["value"] ?? "-", request.remoteAddress,
                   request.query.first("q") ?? "-", request.headers["X-Test"] ?? "-"].joined(separator: "|"))
        }
        router.post("/upload") { request in .text("got \(request.body.count)") }
        router.get("/cached") { _ in Response(status: 200, headers: ["X-Cache": "HIT", "Content-Type": "application/json"], body: Array("{}".utf8)) }
        return router
    }

    @Test func logsTheRealPortAndAnswersImmediateRoutes() async throws {
        let store = CapturingLogHandler.Store()
        let logger = CapturingLogHandler.logger(store)
        try await withLiveServer(router: Self.router(), logger: logger) { port, server in
            #expect(port > 0)
            #expect(server.port == port)
            #expect(store.messages.contains { $0.contains("listening on http://127.0.0.1:\(port)") })
            let response = try await RawHTTPClient.get(port: port, "/healthz")
            #expect(response.status == 200)
            #expect(response.text == #"{"status":"ok"}"#)
            #expect(response.headers["Content-Type"] == "application/json")
            #expect(response.headers["Content-Length"] == "15")
        }
    }

    @Test func asyncRouteSeesRawTargetDecodedSegmentsAndClientAddress() async throws {
        let response = try await answer(
            to: "GET /echo/a%2Fb%00c?q=x+y HTTP/1.1\r\nHost: h\r\nX-Test: yes\r\n\r\n", router: Self.router())
        #expect(response.status == 200)
        #expect(response.text == "/echo/a%2Fb%00c?q=x+y|a/b\u{0}c|127.0.0.1|x y|yes")
    }

    /// The target is decoded once, by the router: an escaped `%` stays a `%` (libmicrohttpd's own decoding of the URL
    /// it hands the access handler is switched off in the shim, and nothing may read that URL and decode it again).
    @Test func anEscapedPercentIsDecodedOnce() async throws {
        let response = try await answer(
            to: "GET /echo/%2541%252F?q=%2541 HTTP/1.1\r\nHost: h\r\n\r\n", router: Self.router())
        #expect(response.status == 200)
        #expect(response.text == "/echo/%2541%252F?q=%2541|%41%2F|127.0.0.1|%41|-")
    }

    /// A field value does not include the whitespace around it (RFC 9110 section 5.5): libmicrohttpd drops the
    /// leading, the server the trailing, inner whitespace stays.
    @Test func aHeaderValueIsReadWithoutTheWhitespaceAroundIt() async throws {
        for (sent, read) in [("yes  ", "yes"), (" \tyes\t ", "yes"), ("a b ", "a b"), ("   ", ""), ("yes", "yes")] {
            let response = try await answer(
                to: "GET /echo/v HTTP/1.1\r\nHost: h\r\nX-Test:\(sent)\r\n\r\n", router: Self.router())
            #expect(response.text.hasSuffix("|\(read)"), "\(Array(sent.utf8))")
        }
    }

    @Test func unknownPathIs404ProblemAndWrongMethod405() async throws {
        try await withLiveServer(router: Self.router()) { port, _ in
            let notFound = try await RawHTTPClient.get(port: port, "/nope")
            #expect(notFound.status == 404)
            #expect(notFound.headers["Content-Type"] == "application/problem+json")
            #expect(notFound.text.contains(#""status":404"#))
            let wrongMethod = try await RawHTTPClient.get(port: port, "/healthz", method: "DELETE")
            #expect(wrongMethod.status == 405)
            #expect(wrongMethod.headers["Allow"] == "GET, HEAD")
        }
    }

    @Test func badPercentEncodingIs400() async throws {
        try await withLiveServer(router: Self.router()) { port, _ in
            let response = try await RawHTTPClient.get(port: port, "/echo/%zz")
            #expect(response.status == 400)
            #expect(response.headers["Content-Type"] == "application/problem+json")
        }
    }

    @Test func headResponseIsFollowedDirectlyByTheNextResponse() async throws {
        try await withLiveServer(router: Self.router()) { port, _ in
            let result: Result<String, RawClientError> = await RawHTTPClient.onThread {
                Result { () throws(RawClientError) -> String in
                    let socket = try RawHTTPClient.connect(port: port)
                    defer { _ = close(socket) }
                    try RawHTTPClient.send(socket, Array("HEAD /cached HTTP/1.1\r\nHost: h\r\n\r\n".utf8))
                    let head = try RawHTTPClient.readResponse(socket, expectBody: false, checkClosed: false)
                    try RawHTTPClient.send(socket, Array("GET /cached HTTP/1.1\r\nHost: h\r\n\r\n".utf8))
                    let get = try RawHTTPClient.readResponse(socket, expectBody: true, checkClosed: false)
                    return "\(head.status) \(head.headers["X-Cache"] ?? "-") \(head.headers["Content-Length"] ?? "-") "
                        + "\(head.body.count) \(get.status) \(get.text)"
                }
            }
            let summary = try result.get()
            #expect(summary == "200 HIT 2 0 200 {}")
        }
    }

    @Test func bodyWithinTheLimitReachesTheHandler() async throws {
        try await withLiveServer(.test(maxBodyBytes: 1000), router: Self.router()) { port, _ in
            let body = String(repeating: "x", count: 1000)
            let response = try await RawHTTPClient.exchange(
                port: port, "POST /upload HTTP/1.1\r\nHost: h\r\nContent-Length: 1000\r\n\r\n\(body)")
            #expect(response.status == 200)
            #expect(response.text == "got 1000")
            let chunked = try await RawHTTPClient.exchange(
                port: port, "POST /upload HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n3e8\r\n\(body)\r\n0\r\n\r\n")
            #expect(chunked.text == "got 1000")
        }
    }
}

@Suite(.timeLimit(.minutes(10))) struct ServerStartTests {
    @Test func invalidHostIsReported() {
        let server = MicroHTTPServer(
            configuration: MicroHTTPServerConfiguration(host: "no-such-host.invalid", port: 0),
            responder: Router(), ticker: ContinuousClock(), logger: quietLogger)
        #expect(throws: MicroHTTPServerError.invalidHost("no-such-host.invalid")) { try server.start() }
    }

    /// With one polling thread MHD binds; with a pool the shim does: the same error either way.
    @Test(arguments: [1, 2]) func portInUseIsReported(pollingThreads: Int) throws {
        let first = MicroHTTPServer(configuration: .test(), responder: Router(), ticker: ContinuousClock(), logger: quietLogger)
        let port = try first.start()
        let second = MicroHTTPServer(
            configuration: MicroHTTPServerConfiguration(host: "127.0.0.1", port: port, pollingThreads: pollingThreads),
            responder: Router(), ticker: ContinuousClock(), logger: quietLogger)
        let error = #expect(throws: MicroHTTPServerError.self) { try second.start() }
        #expect(error == .startFailed(host: "127.0.0.1", port: port, errno: EADDRINUSE))
        #expect(error?.description == "cannot listen on 127.0.0.1:\(port): Address already in use (errno \(EADDRINUSE))")
        #expect(try first.start() == port)
    }

    @Test func invalidPortIsReported() {
        let server = MicroHTTPServer(
            configuration: MicroHTTPServerConfiguration(port: 70_000), responder: Router(), ticker: ContinuousClock(), logger: quietLogger)
        #expect(throws: MicroHTTPServerError.invalidPort(70_000)) { try server.start() }
    }
}

@Suite(.timeLimit(.minutes(10)), .serialized) struct ReusableResponseServingTests {
    @Test func aReusableResponseIsSentIdenticallyEveryTimeOnBothPaths() async throws {
        let shared = Response(
            status: 200, headers: ["Content-Type": "application/json", "X-Shared": "yes"], body: Array(#"{"n":1}"#.utf8)
        ).reusable()
        var router = Router()
        router.handle(.get, "/sync") { _ in .now(shared) }
        router.get("/async") { _ in shared }
        try await withLiveServer(router: router) { port, _ in
            for path in ["/sync", "/async", "/sync", "/async", "/sync"] {
                let response = try await RawHTTPClient.get(port: port, path)
                #expect(response.status == 200)
                #expect(response.text == #"{"n":1}"#)
                #expect(response.headers["X-Shared"] == "yes")
                #expect(response.headers["Content-Length"] == "7")
            }
            let head = try await RawHTTPClient.get(port: port, "/sync", method: "HEAD")
            #expect(head.status == 200 && head.text.isEmpty)
        }
        // Prepared once, after its first sending, and kept in the response's memo.
        #expect(shared.memo?.current(as: PreparedResponse.self) != nil)
    }
}

@Suite(.timeLimit(.minutes(10)), .serialized) struct PollingThreadPoolTests {
    @Test func aPoolOfPollingThreadsAnswersBothPathsAndDrains() async throws {
        let latch = Latch()
        var router = Router()
        router.handle(.get, "/sync") { _ in .now(.text("now")) }
        router.get("/async") { _ in
            await latch.wait()
            return .text("done")
        }
        try await withLiveServer(.test(pollingThreads: 2), router: router) { port, _ in
            let answers = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<40 { group.addTask { try await RawHTTPClient.get(port: port, "/async").text } }
                for _ in 0..<40 { group.addTask { try await RawHTTPClient.get(port: port, "/sync").text } }
                var answers: [String] = []
                for _ in 0..<40 { answers.append(try await group.next() ?? "") }
                #expect(answers.allSatisfy { $0 == "now" })
                latch.open()
                for try await answer in group { answers.append(answer) }
                return answers
            }
            #expect(answers.filter { $0 == "done" }.count == 40)
        }
    }

    /// A burst of connections (as a stampede brings) is split evenly between the polling threads: the answer
    /// of a connection is sent by the thread that owns it, so an uneven split is a late last answer. libmicrohttpd
    /// places a handed-over connection by its descriptor's number; here every free number below the table's top
    /// is even (as a client's and a server's sockets closed in pairs leave it), which put all of them on one
    /// thread before the acceptor dealt them out evenly.
    @Test func aBurstOfConnectionsIsSplitEvenlyBetweenThePollingThreads() async throws {
        var router = Router()
        router.handle(.get, "/thread") { _ in .now(.text("\(pthread_self())")) }
        try await withLiveServer(.test(pollingThreads: 2), router: router) { port, _ in
            let threads: [String] = try await RawHTTPClient.onThread {
                Result { () throws(RawClientError) -> [String] in
                    // 512 descriptors, the even ones closed again: 256 even holes, more than the burst's 64
                    // client and 64 server sockets take.
                    let held = (0..<512).map { _ in open("/dev/null", O_RDONLY | O_CLOEXEC) }.filter { $0 >= 0 }
                    held.filter { $0 % 2 == 0 }.forEach { close($0) }
                    defer { held.filter { $0 % 2 != 0 }.forEach { close($0) } }
                    // All connected before any request: the server accepts them as one burst.
                    var sockets: [Int32] = []
                    defer { sockets.forEach { close($0) } }
                    for _ in 0..<64 { sockets.append(try RawHTTPClient.connect(port: port)) }
                    var threads: [String] = []
                    for socket in sockets {
                        try RawHTTPClient.send(socket, Array("GET /thread HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
                        threads.append(try RawHTTPClient.readResponse(socket, expectBody: true, checkClosed: false).text)
                    }
                    return threads
                }
            }.get()
            let perThread = Dictionary(grouping: threads, by: { $0 }).mapValues(\.count)
            // Dealt evenly, whatever descriptors the suites beside this one open and close meanwhile (CI saw 1/63
            // when they were placed by number alone).
            #expect(perThread.values.sorted() == [32, 32], "\(perThread)")
        }
    }
}
