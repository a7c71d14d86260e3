import HTTPRouting
import Testing

/// RFC 9110's token: the one check behind media types and configured upstream header names.
struct HTTPTokenTests {
    @Test func exactlyTheSeventySevenTcharBytesAreTokenBytes() {
        let tchar = Set("0123456789abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ!#$%&'*+-.^_`|~".utf8)
        #expect(tchar.count == 77)
        #expect(Set((0...255).map(UInt8.init).filter(HTTPToken.isTokenByte)) == tchar)
    }

    @Test(arguments: ["X-Api-Key", "x", "!#$%&'*+-.^_`|~", "A0z9"])
    func aTokenIsAccepted(text: String) {
        #expect(HTTPToken.isToken(text))
    }

    @Test(arguments: ["", "X Api", "X:Y", "X/Y", "Ηost", "X\u{7F}", "X\t"])
    func anythingElseIsNot(text: String) {
        #expect(!HTTPToken.isToken(text))
    }
}
