import Clocks
import Foundation

/// Refresh-ahead in a local-time window (`health.averages`): a read of an entry older than
/// `minimumAge`, between `startHour` and `endHour` local time, on the rule's `weekday` (when set),
/// serves the cached value stale and starts one deduplicated background refresh.
public struct RefreshAheadRule: Sendable {
    public var timeZone: TimeZone
    /// First local hour of the window (inclusive).
    public var startHour: Int
    /// Local hour the window ends (exclusive).
    public var endHour: Int
    public var minimumAge: Duration
    /// 1 = Sunday … 7 = Saturday: the rule applies only on that local weekday; `nil` = every day.
    public var weekday: Int?

    public init(
        timeZone: TimeZone, startHour: Int = 6, endHour: Int = 9, minimumAge: Duration = .seconds(24 * 3600),
        weekday: Int? = nil
    ) {
        self.timeZone = timeZone
        self.startHour = startHour
        self.endHour = endHour
        self.minimumAge = minimumAge
        self.weekday = weekday
    }

    /// Whether a read at `now` of an entry stored at `storedAt` should refresh it in the background.
    package func shouldRefresh(storedAt: Date, now: Date) -> Bool {
        guard now.duration(since: storedAt) > minimumAge else { return false }
        let parts = LocalTime.calendar(timeZone).dateComponents([.hour, .weekday], from: now)
        guard let hour = parts.hour, hour >= startHour, hour < endHour else { return false }
        if let weekday, parts.weekday != weekday { return false }
        return true
    }
}
