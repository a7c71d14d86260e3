import Testing
@testable import HTTPRouting

@Suite(.timeLimit(.minutes(10))) struct HTTPHeadersTests {
    @Test func lookupIsCaseInsensitiveAndOrdered() {
        var headers = HTTPHeaders()
        headers.add(name: "X-Cache", value: "HIT")
        headers.add(name: "set-cookie", value: "a")
        headers.add(name: "Set-Cookie", value: "b")
        #expect(headers["x-cache"] == "HIT")
        #expect(headers["X-CACHE"] == "HIT")
        #expect(headers["Set-Cookie"] == "a")
        #expect(headers.values(for: "SET-COOKIE") == ["a", "b"])
        #expect(headers["Missing"] == nil)
        #expect(headers.map(\.name) == ["X-Cache", "set-cookie", "Set-Cookie"])
    }

    @Test func replaceOrAddKeepsPositionAndDropsDuplicates() {
        var headers: HTTPHeaders = ["A": "1", "B": "2"]
        headers.add(name: "a", value: "3")
        headers.replaceOrAdd(name: "A", value: "9")
        #expect(headers.map(\.value) == ["9", "2"])
        headers.replaceOrAdd(name: "C", value: "4")
        #expect(headers["c"] == "4")
        #expect(headers.count == 3)
    }

    /// The names a look-up skips without comparing (`mayContain`) are only ones no field has, in any case, however
    /// the fields came (literal, `add`, `replaceOrAdd`) or went (`remove`); names that share a bit still match only
    /// themselves.
    @Test func aNameIsFoundInAnyCaseWhateverElseSharesItsBit() {
        let names = [
            "Host", "Content-Length", "Transfer-Encoding", "Authorization", "X-Request-ID", "Cache-Control",
            "If-None-Match", "User-Agent", "Accept", "traceparent", "X-Bench", "A", "b", "1", "-", "@", "`",
        ]
        for name in names {
            var headers = HTTPHeaders([(name.uppercased(), "literal")])
            headers.add(name: "Other", value: "x")
            #expect(headers[name.lowercased()] == "literal" && headers.mayContain(name), "\(name)")
            headers.remove(name: name)
            #expect(headers[name] == nil && headers["other"] == "x", "\(name)")
            headers.replaceOrAdd(name: name.lowercased(), value: "replaced")
            #expect(headers[name.uppercased()] == "replaced" && headers.values(for: name) == ["replaced"], "\(name)")
            for other in names where other.lowercased() != name.lowercased() {
                #expect(headers[other] == nil, "\(other) is not \(name)")
            }
        }
        // `@` and `` ` `` differ only in the bit that lowers a letter: they share a bit, never a match.
        let at: HTTPHeaders = ["@": "at"]
        #expect(at.mayContain("`") && at["`"] == nil)
        #expect(!HTTPHeaders().mayContain("Host") && HTTPHeaders()[""] == nil)
    }

    /// A set of names' bits answers as each name's `mayContain` would: false only when none of them is there.
    @Test func theBitsOfSeveralNamesAnswerForAnyOfThem() {
        let bits = HTTPHeaders.bits(of: "Cache-Control", "If-None-Match")
        #expect(!HTTPHeaders().mayContain(anyOf: bits))
        #expect(!(["Host": "a", "X-Bench": "1"] as HTTPHeaders).mayContain(anyOf: bits))
        #expect((["host": "a", "CACHE-control": "no-cache"] as HTTPHeaders).mayContain(anyOf: bits))
        #expect((["if-none-match": "*"] as HTTPHeaders).mayContain(anyOf: bits))
        #expect(HTTPHeaders.bits(of: "If-None-Match") == HTTPHeaders.bits(of: "if-none-match"))
        #expect(HTTPHeaders.bits(of: "Cache-Control", "If-None-Match")
            == HTTPHeaders.bits(of: "Cache-Control") | HTTPHeaders.bits(of: "If-None-Match"))
    }

    @Test func namesOfDifferentLengthDoNotMatch() {
        let headers: HTTPHeaders = ["Content-Length": "1"]
        #expect(headers["Content-Lengt"] == nil)
        #expect(headers["Content-Length2"] == nil)
    }
}
