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

    @Test func namesOfDifferentLengthDoNotMatch() {
        let headers: HTTPHeaders = ["Content-Length": "1"]
        #expect(headers["Content-Lengt"] == nil)
        #expect(headers["Content-Length2"] == nil)
    }
}
