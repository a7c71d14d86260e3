import Foundation
import Testing

@testable import UnicacheApp

/// IMF-fixdate (RFC 9110 §5.6.7), written digit by digit, as Foundation's formatter writes it.
@Suite struct HTTPDatesTests {
    @Test func knownInstants() {
        #expect(HTTPDates.httpDate(second: 0) == "Thu, 01 Jan 1970 00:00:00 GMT")
        #expect(HTTPDates.httpDate(second: 784_111_777) == "Sun, 06 Nov 1994 08:49:37 GMT")
        #expect(HTTPDates.httpDate(second: 951_782_400) == "Tue, 29 Feb 2000 00:00:00 GMT")
        #expect(HTTPDates.httpDate(second: 4_107_542_399) == "Sun, 28 Feb 2100 23:59:59 GMT")
        #expect(HTTPDates.httpDate(second: 4_107_542_400) == "Mon, 01 Mar 2100 00:00:00 GMT")
        #expect(HTTPDates.httpDate(second: -1) == "Wed, 31 Dec 1969 23:59:59 GMT")
        #expect(HTTPDates.httpDate(Date(timeIntervalSince1970: 1_795_046_400.999)) == "Thu, 19 Nov 2026 00:00:00 GMT")
    }

    /// Every day from 1900 to 2200 at a second that moves through the day, against Foundation's formatter.
    @Test func agreesWithFoundationOverThreeCenturies() {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        var mismatches: [String] = []
        for day in -25_567..<84_006 {
            let second = day * 86_400 + (day &* 7_919) % 86_400
            let expected = formatter.string(from: Date(timeIntervalSince1970: TimeInterval(second)))
            let written = HTTPDates.httpDate(second: second)
            if written != expected { mismatches.append("\(second): \(written) != \(expected)") }
        }
        #expect(mismatches.isEmpty, "\(mismatches.prefix(5))")
    }
}
