import Testing
@testable import HTTPRouting

@Suite(.timeLimit(.minutes(10))) struct RequestParsingTests {
    /// The server's method parse: the common methods are the constants, anything else (a longer or shorter token
    /// with the same start, another case) is kept as sent.
    @Test(arguments: [
        ("GET", HTTPMethod.get), ("HEAD", .head), ("POST", .post), ("PUT", .put), ("DELETE", .delete),
        ("GETS", HTTPMethod("GETS")), ("GE", HTTPMethod("GE")), ("get", HTTPMethod("get")), ("PATCH", .patch),
        ("", HTTPMethod("")),
    ])
    func methodsFromCStrings(text: String, method: HTTPMethod) {
        #expect(text.withCString { HTTPMethod(cString: $0) } == method)
    }

    @Test func splitsAndDecodesPathSegments() throws {
        let request = try Request(method: .get, target: "/v1/cache/a%20b/c%3Ad")
        #expect(request.pathSegments == ["v1", "cache", "a b", "c:d"])
        #expect(request.target == "/v1/cache/a%20b/c%3Ad")
        #expect(request.path == "/v1/cache/a%20b/c%3Ad")
    }

    @Test func encodedSlashStaysInsideItsSegment() throws {
        let request = try Request(method: .get, target: "/v1/cache/a%2Fb")
        #expect(request.pathSegments == ["v1", "cache", "a/b"])
    }

    @Test func encodedNULIsDecodedNotCut() throws {
        let request = try Request(method: .get, target: "/v1/cache/ab%00cd?x=1")
        #expect(request.pathSegments == ["v1", "cache", "ab\u{0}cd"])
        #expect(request.query.first("x") == "1")
    }

    @Test(arguments: ["/v1/cache/%", "/v1/cache/%2", "/v1/cache/%zz", "/v1/%g0/x"])
    func invalidPercentEncodingIsA400Problem(target: String) {
        #expect(throws: Problem.self) { try Request(method: .get, target: target) }
        do {
            _ = try Request(method: .get, target: target)
        } catch {
            #expect(error.status == 400)
        }
    }

    /// A fragment never reaches a server (RFC 9112 section 3.2): in the path it was a segment (`healthz#x`, 404), in
    /// the query part of a value (`days` = `3#x`); either is one 400.
    @Test(arguments: ["/healthz#x", "/v1/users/alice/wellness?days=3#x", "/#", "/a%23b#"])
    func aFragmentIsA400Problem(target: String) {
        let error = #expect(throws: Problem.self) { try Request(method: .get, target: target) }
        #expect(error?.status == 400)
        #expect(error?.detail.contains("fragment") == true)
    }

    @Test func anEncodedHashIsAPathCharacter() throws {
        #expect(try Request(method: .get, target: "/v1/cache/a%23b").pathSegments == ["v1", "cache", "a#b"])
    }

    @Test func invalidQueryEncodingIsA400Problem() {
        #expect(throws: Problem.self) { try Request(method: .get, target: "/x?days=%4") }
    }

    /// 64 query parameters are taken (empty ones between `&&` do not count); one more is 414 problem+json.
    @Test func moreQueryParametersThanTheLimitAre414() throws {
        let taken = (0..<QueryParameters.maximumCount).map { "p\($0)=\($0)" }.joined(separator: "&")
        #expect(try Request(method: .get, target: "/x?\(taken)&&").query.items.count == 64)
        let error = #expect(throws: Problem.self) { try Request(method: .get, target: "/x?\(taken)&one=more") }
        #expect(error?.status == 414)
        #expect(error?.response.headers["Content-Type"] == "application/problem+json")
        #expect(error?.members == [Problem.Member("limit", .int(64))])
    }

    @Test func rootAndTrailingSlash() throws {
        #expect(try Request(method: .get, target: "/").pathSegments == [])
        #expect(try Request(method: .get, target: "/healthz/").pathSegments == ["healthz", ""])
    }

    @Test func absoluteFormKeepsOnlyThePath() throws {
        let request = try Request(method: .get, target: "http://example.com:8080/v1/x?y=2")
        #expect(request.pathSegments == ["v1", "x"])
        #expect(request.query.first("y") == "2")
    }

    @Test func queryIsOrderedDecodedAndPlusIsSpace() throws {
        let request = try Request(method: .get, target: "/a?types=ride,run&tz=Europe%2FBerlin&q=a+b&types=swim&flag&e=")
        let query = request.query
        #expect(query.first("types") == "ride,run")
        #expect(query.all("types") == ["ride,run", "swim"])
        #expect(query.first("tz") == "Europe/Berlin")
        #expect(query.first("q") == "a b")
        #expect(query.contains("flag"))
        #expect(query.first("flag") == "")
        #expect(query.first("e") == "")
        #expect(!query.contains("missing"))
        #expect(query.items.map(\.name) == ["types", "tz", "q", "types", "flag", "e"])
    }

    @Test func pathPlusIsNotASpace() throws {
        #expect(try Request(method: .get, target: "/a+b").pathSegments == ["a+b"])
    }

    @Test func multibyteEscapesDecodeAsUTF8() throws {
        #expect(try Request(method: .get, target: "/caf%C3%A9").pathSegments == ["café"])
    }
}
