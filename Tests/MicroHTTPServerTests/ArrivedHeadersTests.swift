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
            (name + "XYZ").withCString { raw in
                Array(value.utf8).withUnsafeBytes { arrived.note(raw, name.utf8.count, value: value, bytes: $0) }
            }
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
            ("Transfer-Encodin", "x"),
        ])
        #expect(!noted.hasHost && !noted.hasFraming && noted.requestID == nil)
        // Without a Host, an HTTP/1.1 request is refused; HTTP/1.0 may go without.
        #expect(RequestFraming.problem(for: noted, isHTTP11: true, maxBodyBytes: 10)?.status == 400)
        #expect(RequestFraming.problem(for: noted, isHTTP11: false, maxBodyBytes: 10) == nil)
    }

    /// A name is one or more of RFC 9110's token bytes; anything else (whitespace before the colon, a vertical tab,
    /// a control byte, a byte past ASCII, nothing) is a 400, whatever the name looks like.
    @Test func aNameThatIsNotATokenIsRefused() {
        let tokens = ["Host", "x", "!#$%&'*+-.^_`|~", "A0z9", "X-Request-ID"]
        for name in tokens {
            #expect(!arrived([("Host", "h"), (name, "v")]).invalidName, "\(name)")
        }
        let others = ["", "Content-Length ", "Transfer-Encoding\t", "Content-Length\u{0B}", "Bad Name", "X\u{01}",
                      "X\u{7F}", "Ηost", "X:Y", "X(1)", "X\"", "X/Y", "X@Y", "X[Y]", "X{Y}", "X;Y", "X,Y", "X=Y", "X?Y", "X\\Y"]
        for name in others {
            let noted = arrived([("Host", "h"), (name, "v")])
            #expect(noted.invalidName, "\(Array(name.utf8))")
            #expect(RequestFraming.problem(for: noted, isHTTP11: false, maxBodyBytes: 10)?.status == 400)
        }
        // Every byte, one at a time: exactly the 77 of tchar pass, the bytes the rest of the service takes for tokens.
        #expect(Self.bytesAccepted(by: ArrivedHeaders.isToken) == Self.alphanumerics.union("!#$%&'*+-.^_`|~".utf8))
        #expect(Self.bytesAccepted(by: ArrivedHeaders.isToken) == Set((0...255).map(UInt8.init).filter(HTTPToken.isTokenByte)))
    }

    /// A Host value is a host name, an IPv4 address or an IP literal, with an optional port: RFC 3986's unreserved and
    /// sub-delims bytes, `%`, `:`, `[` and `]`, or nothing; a value with any other byte is a 400.
    @Test func aHostValueWithAByteNoHostHasIsRefused() {
        for value in ["", "127.0.0.1:8080", "[::1]:80", "[v1.fe80::a+en1]", "xn--bcher-kva.example", "a%20b", "h_1~x"] {
            let noted = arrived([("Host", value)])
            #expect(!noted.invalidHost && RequestFraming.problem(for: noted, isHTTP11: true, maxBodyBytes: 10) == nil)
        }
        for value in ["a b", "a/b", "u@h", "h?x", "h#x", "h\\x", "h\"x", "<h>", "h{1}", "h|x", "h^x", "h`x", "h\u{7F}",
                      "h\u{01}", "bücher"] {
            let noted = arrived([("Host", value)])
            #expect(noted.invalidHost, "\(value)")
            #expect(RequestFraming.problem(for: noted, isHTTP11: true, maxBodyBytes: 10)?.status == 400)
        }
        // Every byte, one at a time: exactly the 81 of host and port pass.
        #expect(Self.bytesAccepted(by: ArrivedHeaders.isHost) == Self.alphanumerics.union("-._~!$&'()*+,;=%:[]".utf8))
    }

    /// The bytes `check` accepts alone, each of the 256 tried.
    private static func bytesAccepted(by check: (UnsafeRawBufferPointer) -> Bool) -> Set<UInt8> {
        Set((0...255).map(UInt8.init).filter { byte in [byte].withUnsafeBytes(check) })
    }

    private static let alphanumerics = Set("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ".utf8)
}
