import Foundation
@testable import Settings
import Testing

@testable import UnicacheApp
@testable import UpstreamHTTP

@Suite(.timeLimit(.minutes(10))) struct RetryAfterTests {
    static let now = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT

    @Test(arguments: [
        ("120", 120), (" 0 ", 0), ("Sun, 06 Nov 1994 08:50:37 GMT", 60), ("Sunday, 06-Nov-94 08:50:37 GMT", 60),
        ("Sun Nov  6 08:50:37 1994", 60), ("Sun, 06 Nov 1994 08:00:00 GMT", 0),
    ])
    func parses(value: String, seconds: Int) {
        #expect(RetryAfter.seconds(from: value, now: Self.now) == seconds)
    }

    @Test(arguments: ["", "-5", "1.5", "soon", "Sun, 06 Nov"])
    func rejects(value: String) {
        #expect(RetryAfter.seconds(from: value, now: Self.now) == nil)
    }

    @Test func queryEncoding() {
        #expect(HTTPUpstreamFetcher.queryString([]) == "")
        #expect(HTTPUpstreamFetcher.queryString([.init("types", "ride,run"), .init("days", "7")]) == "types=ride,run&days=7")
        #expect(HTTPUpstreamFetcher.percentEncode("Area/City_x-y.z~") == "Area/City_x-y.z~")
        #expect(HTTPUpstreamFetcher.percentEncode("a b+c&d=e?f#g%h") == "a%20b%2Bc%26d%3De%3Ff%23g%25h")
        #expect(HTTPUpstreamFetcher.percentEncode("ü") == "%C3%BC")
    }
}
