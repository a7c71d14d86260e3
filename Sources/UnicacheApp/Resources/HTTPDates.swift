import Foundation

/// Timestamps as the API writes them: ISO 8601 in bodies, IMF-fixdate in `Date` and `Expires`.
enum HTTPDates {
    static func iso8601(_ date: Date) -> String {
        date.formatted(.iso8601)
    }

    /// RFC 9110's IMF-fixdate of `date`'s second (`Sun, 06 Nov 1994 08:49:37 GMT`), written digit by digit (every
    /// rendered answer carries one; English names, the Gregorian calendar and GMT need no format style).
    static func httpDate(_ date: Date) -> String {
        httpDate(second: Int(date.timeIntervalSince1970.rounded(.down)))
    }

    /// The IMF-fixdate of `second` seconds since the Unix epoch (the day's date from `LocalDate`'s arithmetic).
    static func httpDate(second: Int) -> String {
        let secondOfDay = (second % 86_400 + 86_400) % 86_400
        let date = LocalDate(daysSinceEpoch: (second - secondOfDay) / 86_400)
        var text = ""
        text.reserveCapacity(29)
        text += weekdays[date.weekday - 1]
        text += ", "
        append(date.day, digits: 2, to: &text)
        text += " "
        text += months[date.month - 1]
        text += " "
        append(date.year, digits: 4, to: &text)
        text += " "
        append(secondOfDay / 3600, digits: 2, to: &text)
        text += ":"
        append(secondOfDay / 60 % 60, digits: 2, to: &text)
        text += ":"
        append(secondOfDay % 60, digits: 2, to: &text)
        text += " GMT"
        return text
    }

    private static let weekdays = ["Sun", "Mon", "Tue", "Wed", "Thu", "Fri", "Sat"]
    private static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// `value` in decimal, zero-padded to `digits` (a negative year keeps its sign before the padding).
    private static func append(_ value: Int, digits: Int, to text: inout String) {
        if value < 0 { text += "-" }
        let decimal = String(value.magnitude)
        if decimal.utf8.count < digits { text += String(repeating: "0", count: digits - decimal.utf8.count) }
        text += decimal
    }
}
