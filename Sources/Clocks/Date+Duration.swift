#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// Wall-clock times moved by spans: a TTL, a stale-if-error window, a minimum age are `Duration`s, and where one
/// meets a `Date` (an expiry, an entry's age) it meets it here.
extension Date {
    /// This time moved by `span` (to the second's 10⁻¹⁸ as `Double` seconds can: a `Date` is a `Double`).
    public static func + (date: Date, span: Duration) -> Date {
        date.addingTimeInterval(span.seconds)
    }

    /// The span from `earlier` to this time (negative when `earlier` is later).
    public func duration(since earlier: Date) -> Duration {
        .seconds(timeIntervalSince(earlier))
    }
}
