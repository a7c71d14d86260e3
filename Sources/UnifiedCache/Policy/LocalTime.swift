import Clocks
import Foundation

/// Day arithmetic in a time zone, through a Gregorian `Calendar` so DST days are 23 or 25 hours
/// (for the package's own `Expiry` rules too).
package enum LocalTime {
    static func calendar(_ zone: TimeZone) -> Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        return calendar
    }

    /// The first instant of the local day after the one containing `date` (local midnight).
    package static func endOfDay(containing date: Date, in zone: TimeZone) -> Date {
        let calendar = calendar(zone)
        if let interval = calendar.dateInterval(of: .day, for: date) { return interval.end }
        return date + .seconds(24 * 3600)
    }

    package static func sameDay(_ a: Date, _ b: Date, in zone: TimeZone) -> Bool {
        calendar(zone).isDate(a, inSameDayAs: b)
    }

    /// `yyyy-mm-dd` of `date` in `zone`.
    static func dayString(of date: Date, in zone: TimeZone) -> String {
        let parts = calendar(zone).dateComponents([.year, .month, .day], from: date)
        let year = parts.year ?? 0
        let month = parts.month ?? 0
        let day = parts.day ?? 0
        return String(format: "%04d-%02d-%02d", year, month, day)
    }

    static func isValidDayString(_ text: String) -> Bool {
        let bytes = Array(text.utf8)
        guard bytes.count == 10, bytes[4] == UInt8(ascii: "-"), bytes[7] == UInt8(ascii: "-") else { return false }
        return bytes.enumerated().allSatisfy { index, byte in
            index == 4 || index == 7 || (byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9"))
        }
    }
}
