import HTTPRouting
import Testing

@testable import MicroHTTPServer

/// What the server notes of a request's header names as libmicrohttpd hands them over (not terminated, any case):
/// `Host`, the framing headers and the first `X-Request-ID`, and nothing for names that only look alike.
@Suite(.timeLimit(.minutes(1))) struct ArrivedHeadersTests {
    private func arrived(_ fields: [(String, String)]) -> ArrivedHeaders {
        var arrived = ArrivedHeaders()
        for (name, value) in fields {
            // The name followed by more bytes, as in MHD's buffer: only `count` of them are read.
            (name + "XYZ").withCString { arrived.note($0, name.utf8.count, value: value) }
            arrived.headers.add(name: name, value: value)
        }
        return arrived
    }

    @Test func namesAreNotedInAnyCaseAndTheFirstRequestIDWins() {
        let noted = arrived([("x-request-id", "first"), ("HOST", "h"), ("X-REQUEST-ID", "second"), ("content-LENGTH", "0")])
        #expect(noted.requestID == "first" && noted.hasHost && noted.hasFraming)
        #expect(arrived([("Transfer-Encoding", "chunked")]).hasFraming)
    }

    @Test func lookAlikeNamesAreNotNoted() {
        let noted = arrived([
            ("Hos", "h"), ("Hostx", "h"), ("X-Request-IE", "id"), ("X-Request-Id2", "id"), ("Content-Lengths", "1"),
            ("Transfer-Encodin", "x"), ("Ηost", "greek eta"),
        ])
        #expect(!noted.hasHost && !noted.hasFraming && noted.requestID == nil)
        // Without a Host, an HTTP/1.1 request is refused; HTTP/1.0 may go without.
        #expect(RequestFraming.problem(for: noted, isHTTP11: true, maxBodyBytes: 10)?.status == 400)
        #expect(RequestFraming.problem(for: noted, isHTTP11: false, maxBodyBytes: 10) == nil)
    }
}
