import HTTPRouting
import Testing
@testable import MicroHTTPServer

/// An answer libmicrohttpd 0.9.75 makes itself, before the request reaches the service (contract §2's one
/// exception to problem+json; the README lists them), exactly as 0.9.75 makes it: a test fails when a library
/// upgrade changes one, so that the list is kept true.
struct LibraryAnswer: Sendable, CustomTestStringConvertible {
    var testDescription: String
    var request: String
    /// The status, or nil when the library closes the connection without answering.
    var status: Int?
    /// The title of the library's short HTML page.
    var title = ""
}

let libraryAnswers: [LibraryAnswer] = [
    LibraryAnswer(testDescription: "a request line without a target and version", request: "GARBAGE\r\n\r\n", status: nil),
    LibraryAnswer(
        testDescription: "a version that is not HTTP/digit.digit", request: "GET /now HTXP/1.1\r\nHost: h\r\n\r\n",
        status: 400, title: "Request malformed"),
    LibraryAnswer(
        testDescription: "HTTP/0.9", request: "GET /now HTTP/0.9\r\nHost: h\r\n\r\n",
        status: 505, title: "Requested HTTP version is not supported"),
    LibraryAnswer(
        testDescription: "HTTP/2.0", request: "GET /now HTTP/2.0\r\nHost: h\r\n\r\n",
        status: 505, title: "Requested HTTP version is not supported"),
    LibraryAnswer(
        testDescription: "a header line without a colon", request: "GET /now HTTP/1.1\r\nHost: h\r\nNoColon\r\n\r\n",
        status: 400, title: "Request malformed"),
    LibraryAnswer(
        testDescription: "a NUL byte in a header's name (no colon before it)",
        request: "GET /now HTTP/1.1\r\nHost: h\r\nX\u{0}Content-Length: 3\r\n\r\nabc",
        status: 400, title: "Request malformed"),
    LibraryAnswer(
        testDescription: "a request target beyond the connection's memory",
        request: "GET /\(String(repeating: "a", count: 9000)) HTTP/1.1\r\nHost: h\r\n\r\n",
        status: 414, title: "Request too big"),
    LibraryAnswer(
        testDescription: "headers beyond the connection's memory",
        request: "GET /now HTTP/1.1\r\nHost: h\r\nX-Pad: \(String(repeating: "a", count: 9000))\r\n\r\n",
        status: 431, title: "Request too big"),
    LibraryAnswer(
        testDescription: "more header fields than the connection's memory holds records for",
        request: "GET /now HTTP/1.1\r\nHost: h\r\n\((0..<150).map { "h\($0): 1\r\n" }.joined())\r\n",
        status: 431, title: "Request too big"),
    LibraryAnswer(
        testDescription: "a chunk size beyond 64 bits",
        request: "POST /upload HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nFFFFFFFFFFFFFFFFFF\r\n",
        status: 413, title: "Request content too large"),
    LibraryAnswer(
        testDescription: "a malformed chunk size",
        request: "POST /upload HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\nzz\r\n",
        status: 400, title: "Request malformed"),
]

@Suite(.timeLimit(.minutes(10))) struct LibraryAnswersTests {
    static var router: Router {
        var router = Router()
        router.getNow()
        router.post("/upload") { request in .text("got \(request.body.count)") }
        return router
    }

    @Test(arguments: libraryAnswers)
    func libmicrohttpdAnswersItself(_ answer: LibraryAnswer) async throws {
        try await withLiveServer(router: Self.router) { port, _ in
            let received = try await RawHTTPClient.everythingUntilClosed(port: port, answer.request)
            let text = String(decoding: received, as: UTF8.self)
            guard let status = answer.status else {
                #expect(received.isEmpty)
                return
            }
            let lines = text.components(separatedBy: "\r\n")
            let statusLines = lines.filter { $0.hasPrefix("HTTP/") }
            #expect(statusLines.count == 1)
            #expect(statusLines.allSatisfy { $0.hasPrefix("HTTP/1.1 \(status) ") })
            // Its headers: the connection closes, and the page is not labelled (no Content-Type).
            let headers = lines.dropFirst().prefix { !$0.isEmpty }
            #expect(headers.contains("Connection: close"))
            #expect(!headers.contains { $0.lowercased().hasPrefix("content-type:") })
            let body = text.components(separatedBy: "\r\n\r\n").last ?? ""
            #expect(body.hasPrefix("<html><head><title>\(answer.title)</title></head><body>"))
            #expect(body.hasSuffix("</body></html>"))
        }
    }

    /// Where the service sees the request first it answers problem+json (with the library, a transfer coding it
    /// does not know would be read as a body lasting until the connection closes).
    @Test func aTransferCodingOtherThanChunkedIs501Problem() async throws {
        try await withLiveServer(router: Self.router) { port, _ in
            let response = try await RawHTTPClient.exchange(
                port: port, "POST /upload HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: gzip\r\n\r\nabc", checkClosed: true)
            #expect(response.status == 501)
            #expect(response.headers["Content-Type"] == "application/problem+json")
            #expect(response.closed)
            let chunked = try await RawHTTPClient.exchange(
                port: port, "POST /upload HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: Chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
            #expect(chunked.text == "got 3")
        }
    }
}
