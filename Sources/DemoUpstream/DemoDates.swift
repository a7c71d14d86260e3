import Foundation

/// Calendar arithmetic for the demo generators: local days in a time zone and ISO 8601 stamps.
struct DemoDates: Sendable {
    let timeZone: TimeZone
    /// The zone's name as asked for (Foundation reports `UTC` as `GMT`).
    let timeZoneName: String
    private let calendar: Calendar

    /// `identifier` is an IANA zone the app already validated; anything else falls back to UTC.
    init(timeZoneIdentifier identifier: String?) {
        let requested = identifier.flatMap(TimeZone.init(identifier:))
        let zone = requested ?? TimeZone(identifier: "UTC") ?? .gmt
        timeZone = zone
        timeZoneName = requested == nil ? "UTC" : identifier ?? "UTC"
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        self.calendar = calendar
    }

    /// The `yyyy-mm-dd` of `date` in this zone.
    func day(of date: Date) -> String {
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", parts.year ?? 1970, parts.month ?? 1, parts.day ?? 1)
    }

    /// Midnight at the start of the local day holding `date`.
    func startOfDay(_ date: Date) -> Date {
        calendar.startOfDay(for: date)
    }

    /// Midnight starting the day `yyyy-mm-dd`, or `nil` when it is not a date.
    func startOfDay(named day: String) -> Date? {
        let fields = day.split(separator: "-").compactMap { Int($0) }
        guard fields.count == 3 else { return nil }
        let parts = DateComponents(year: fields[0], month: fields[1], day: fields[2])
        return calendar.date(from: parts)
    }

    /// The `count` day names ending with the day of `date`, oldest first.
    func days(endingAt date: Date, count: Int) -> [String] {
        let today = startOfDay(date)
        return (0..<max(0, count)).reversed().compactMap { back in
            calendar.date(byAdding: .day, value: -back, to: today).map(day(of:))
        }
    }

    func adding(days: Int, to date: Date) -> Date {
        calendar.date(byAdding: .day, value: days, to: date) ?? date.addingTimeInterval(Double(days) * 86_400)
    }

    /// The local hour (0–23) and minute of `date`.
    func hourAndMinute(of date: Date) -> (hour: Int, minute: Int) {
        let parts = calendar.dateComponents([.hour, .minute], from: date)
        return (parts.hour ?? 0, parts.minute ?? 0)
    }

    /// ISO 8601 with this zone's offset (`Z` for UTC), whole seconds.
    func timestamp(_ date: Date) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = timeZone
        formatter.formatOptions = [.withInternetDateTime]
        return formatter.string(from: date)
    }
}
