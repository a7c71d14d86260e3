import Foundation
import HTTPRouting
import Testing
@testable import MicroHTTPServer

/// Every request gets exactly one answer, never an empty reply, a hang or a head sent twice: over a raw socket, with
/// one polling thread (libmicrohttpd listens) and a pool of two (the shim's acceptor hands connections over).
@Suite(.timeLimit(.minutes(10))) struct OneAnswerTests {
    static var router: Router {
        var router = Router()
        router.getNow()
        // Answered on the polling thread: no test here waits on a cooperative pool other tests keep busy.
        router.handle(.get, "/echo") { request in .now(.text("\(request.query.items.count) parameters")) }
        router.post("/upload") { request in .text("got \(request.body.count)") }
        return router
    }

    /// Everything the server sent on one connection until it closed, as text.
    static func received(port: Int, _ request: String) async throws -> String {
        String(decoding: try await RawHTTPClient.everythingUntilClosed(port: port, request), as: UTF8.self)
    }

    /// The status lines in `text`, wherever they start (a head sent twice shows two; a second answer's follows the
    /// first one's body on its line).
    static func statusLines(_ text: String) -> [String] {
        text.components(separatedBy: "HTTP/1.").dropFirst().map { "HTTP/1." + ($0.components(separatedBy: "\r\n").first ?? "") }
    }

    /// `text` is one problem+json answer with `status`, closing the connection; returns its problem object.
    static func expectOneProblem(_ text: String, status: Int, sourceLocation: SourceLocation = #_sourceLocation) throws
        -> [String: Any]
    {
        #expect(statusLines(text) == ["HTTP/1.1 \(status) \(HTTPStatus.reasonPhrase(status))"],
                sourceLocation: sourceLocation)
        let parts = text.components(separatedBy: "\r\n\r\n")
        #expect(parts.count == 2, sourceLocation: sourceLocation)
        let headers = parts[0].components(separatedBy: "\r\n").dropFirst()
        #expect(headers.contains("Content-Type: application/problem+json"), sourceLocation: sourceLocation)
        #expect(headers.contains("Connection: close"), sourceLocation: sourceLocation)
        #expect(headers.contains("Content-Length: \(parts.last?.utf8.count ?? -1)"), sourceLocation: sourceLocation)
        let body = try JSONSerialization.jsonObject(with: Data((parts.last ?? "").utf8))
        let problem = try #require(body as? [String: Any], sourceLocation: sourceLocation)
        #expect(problem["status"] as? Int == status, sourceLocation: sourceLocation)
        return problem
    }

    /// libmicrohttpd 0.9.75 answered these 400 (413 beyond 64 bits) with its status line and headers twice before
    /// one body; the shim answers them once, with the service's problem.
    @Test(arguments: [1, 2])
    func aMalformedContentLengthIsAnsweredOnce(pollingThreads: Int) async throws {
        try await withLiveServer(.test(pollingThreads: pollingThreads), router: Self.router) { port, _ in
            for value in ["abc", "-1", "5, 6", "+5", "0x10", "1e3", " 5 5", "", "5\t6"] {
                let text = try await Self.received(
                    port: port, "POST /upload HTTP/1.1\r\nHost: h\r\nContent-Length: \(value)\r\n\r\n")
                let problem = try Self.expectOneProblem(text, status: 400)
                #expect(problem["type"] as? String == Problem.typeURI("bad-framing"), "Content-Length: \(value)")
            }
            let huge = try await Self.received(
                port: port, "POST /upload HTTP/1.1\r\nHost: h\r\nContent-Length: 99999999999999999999999\r\n\r\n")
            #expect(try Self.expectOneProblem(huge, status: 413)["limitBytes"] as? Int == 1 << 20)
            // The client's request id is echoed, as the service echoes it (one it would not take is not).
            let identified = try await Self.received(
                port: port, "POST /upload HTTP/1.1\r\nHost: h\r\nX-Request-ID: client-7\r\nContent-Length: abc\r\n\r\n")
            #expect(identified.contains("\r\nX-Request-ID: client-7\r\n"))
            let unfit = try await Self.received(
                port: port, "POST /upload HTTP/1.1\r\nHost: h\r\nX-Request-ID: a b\r\nContent-Length: abc\r\n\r\n")
            #expect(!unfit.contains("X-Request-ID"))
            // After an answered request on the same connection too.
            let kept = try await Self.received(
                port: port, "GET /now HTTP/1.1\r\nHost: h\r\n\r\nPOST /upload HTTP/1.1\r\nHost: h\r\nContent-Length: abc\r\n\r\n")
            #expect(Self.statusLines(kept) == ["HTTP/1.1 200 OK", "HTTP/1.1 400 Bad Request"])
            // The connections the shim closed cost the server nothing.
            #expect(try await RawHTTPClient.get(port: port, "/now").status == 200)
        }
    }

    /// More cookies than the connection's memory holds: libmicrohttpd's 431 head went out twice.
    @Test func tooManyCookiesAreAnsweredOnce() async throws {
        try await withLiveServer(router: Self.router) { port, _ in
            let cookies = (0..<150).map { "c\($0)=1" }.joined(separator: "; ")
            let text = try await Self.received(port: port, "GET /now HTTP/1.1\r\nHost: h\r\nCookie: \(cookies)\r\n\r\n")
            _ = try Self.expectOneProblem(text, status: 431)
        }
    }

    /// A request whose line and headers left too little of the connection's memory for the answer's head was closed
    /// without a byte (~110 short header fields, or 7.6–8 KiB of them): every size now gets exactly one answer, 200
    /// within the budget, 431 problem+json past it, libmicrohttpd's own 414 or 431 page past its memory.
    @Test(arguments: [1, 2])
    func everyHeaderSizeGetsOneAnswer(pollingThreads: Int) async throws {
        let budget = MicroHTTPServerConfiguration.requestHeaderBudget(memoryLimit: 8 << 10)
        try await withLiveServer(.test(pollingThreads: pollingThreads), router: Self.router) { port, _ in
            for count in stride(from: 60, through: 160, by: 2) {
                let fields = (0..<count).map { "h\($0): 1\r\n" }.joined()
                let request = "GET /now HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\(fields)\r\n"
                let text = try await Self.received(port: port, request)
                let lines = Self.statusLines(text)
                #expect(lines.count == 1, "\(count) header fields: \(lines)")
                // What the request holds of the connection's memory: its bytes and 64 per header field.
                let held = request.utf8.count + 64 * (count + 2)
                if held <= budget - 64 {
                    #expect(lines == ["HTTP/1.1 200 OK"], "\(count) header fields")
                } else if held > budget + 64 && count < 105 {
                    _ = try Self.expectOneProblem(text, status: 431)
                }
            }
            for padding in stride(from: 6600, through: 8400, by: 25) {
                for request in [
                    "GET /now HTTP/1.1\r\nHost: h\r\nConnection: close\r\nX-Pad: \(String(repeating: "a", count: padding))\r\n\r\n",
                    "GET /echo?x=\(String(repeating: "a", count: padding)) HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n",
                ] {
                    let lines = Self.statusLines(try await Self.received(port: port, request))
                    #expect(lines.count == 1, "\(padding) bytes: \(lines)")
                }
            }
        }
    }

    /// The shim's 431 to a HEAD request has the headers of the GET's and no body.
    @Test func aHeadRequestOverTheBudgetGetsTheHeadOnly() async throws {
        try await withLiveServer(router: Self.router) { port, _ in
            let fields = (0..<104).map { "h\($0): 1\r\n" }.joined()
            let text = try await Self.received(port: port, "HEAD /now HTTP/1.1\r\nHost: h\r\n\(fields)\r\n")
            #expect(Self.statusLines(text) == ["HTTP/1.1 431 Request Header Fields Too Large"])
            #expect(text.contains("\r\nContent-Type: application/problem+json\r\n"))
            #expect(text.hasSuffix("\r\n\r\n"))
        }
    }

    /// More than ~110 query parameters were never answered (libmicrohttpd ran out of memory parsing them, queued its
    /// 431 and went on as if it had not). The shim hides the query from it; the service takes 64 and answers 414
    /// problem+json past that, up to the request line's bytes.
    @Test(arguments: [1, 2])
    func queryParametersBeyondTheLimitAre414(pollingThreads: Int) async throws {
        try await withLiveServer(.test(pollingThreads: pollingThreads), router: Self.router) { port, _ in
            let limit = QueryParameters.maximumCount
            let taken = (0..<limit).map { "a\($0)=1" }.joined(separator: "&")
            let answered = try await RawHTTPClient.get(port: port, "/echo?\(taken)")
            #expect(answered.status == 200)
            #expect(answered.text == "\(limit) parameters")
            for count in [limit + 1, 120, 200, 1000] {
                let query = (0..<count).map { "a\($0)=1" }.joined(separator: "&")
                let response = try await RawHTTPClient.exchange(
                    port: port, "GET /echo?\(query) HTTP/1.1\r\nHost: h\r\nConnection: close\r\n\r\n")
                #expect(response.status == 414)
                #expect(response.headers["Content-Type"] == "application/problem+json")
                #expect(response.text.contains("\"limit\":\(limit)"))
            }
        }
    }
}
