import HTTPRouting
import Testing
@testable import Access

/// `Authorization: Bearer TOKEN` (RFC 6750 §2.1): the scheme in any case, one space or more, a token; anything else
/// is no bearer credential.
@Suite(.timeLimit(.minutes(1))) struct BearerTokenTests {
    static func token(_ value: String?) -> Substring? {
        var headers = HTTPHeaders()
        if let value { headers.add(name: "Authorization", value: value) }
        guard case .token(let token) = BearerToken.credential(headers) else { return nil }
        return token.text
    }

    @Test(arguments: [
        ("Bearer abc.def.ghi", "abc.def.ghi"),
        ("bearer abc", "abc"),
        ("BEARER abc", "abc"),
        ("bEaReR   abc def", "abc def"),
        ("Bearer x", "x"),
        ("Bearer é.ü", "é.ü"),
    ])
    func aBearerCredentialIsItsToken(header: String, expected: String) {
        #expect(Self.token(header) == Substring(expected))
    }

    @Test(arguments: [
        nil, "", "Bearer", "Bearer ", "Bearer    ", "Bearerabc", "Bearer\tabc", "Basic YWxhZGRpbjpvcGVuc2VzYW1l",
        "Bearex abc", "Bear abc", " Bearer abc", "Beaŕer abc",
    ])
    func anythingElseIsNone(header: String?) {
        #expect(Self.token(header) == nil)
    }
}
