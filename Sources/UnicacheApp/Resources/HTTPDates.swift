import Foundation

/// Timestamps as the API writes them: ISO 8601 in bodies, IMF-fixdate in `Expires`.
enum HTTPDates {
    static func iso8601(_ date: Date) -> String {
        date.formatted(.iso8601)
    }

    static func httpDate(_ date: Date) -> String {
        date.formatted(
            Date.VerbatimFormatStyle(
                format: "\(weekday: .abbreviated), \(day: .twoDigits) \(month: .abbreviated) \(year: .defaultDigits) \(hour: .twoDigits(clock: .twentyFourHour, hourCycle: .zeroBased)):\(minute: .twoDigits):\(second: .twoDigits) GMT",
                locale: Locale(identifier: "en_US_POSIX"), timeZone: TimeZone(identifier: "GMT") ?? .gmt,
                calendar: Calendar(identifier: .gregorian)))
    }
}
