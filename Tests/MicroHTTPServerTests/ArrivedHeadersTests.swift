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
        // Every byte, one at a time: exactly the 77 of tchar pass.
        let passing = (0...255).filter { byte in
            var name = [CChar(bitPattern: UInt8(byte))]
            return ArrivedHeaders.isToken(&name, 1)
        }
        #expect(passing.count == 77)
        #expect(passing.allSatisfy { byte in
            let scalar = Unicode.Scalar(UInt8(byte))
            return ("0"..."9").contains(Character(scalar)) || "!#$%&'*+-.^_`|~".unicodeScalars.contains(scalar)
                || ("a"..."z").contains(Character(scalar)) || ("A"..."Z").contains(Character(scalar))
        })
    }
}
