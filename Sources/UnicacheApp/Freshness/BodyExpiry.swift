import Clocks
import Foundation
import UnifiedCache

/// `health.today`: fresh for at most `maxTTL`, and only while the body's timestamp `field` (ISO 8601) falls on
/// today in `timeZone`. A null or missing timestamp is stale at once; a timestamp from another local day is never
/// served, not even stale. No entry outlives its local day.
struct TodayTimestampExpiry: Expiry {
    var field: String
    var timeZone: TimeZone
    var maxTTL: Duration

    func lifetimes(body: [UInt8], storedAt: Date, staleIfError: Duration) -> (expiresAt: Date, staleUntil: Date) {
        let endOfToday = LocalTime.endOfDay(containing: storedAt, in: timeZone)
        guard let stamp = JSONFields.timestamp(field, in: body) else {
            // Null or missing: stale at once, servable on error until the day ends.
            return (storedAt, min(storedAt + staleIfError, endOfToday))
        }
        guard LocalTime.sameDay(stamp, storedAt, in: timeZone) else {
            // From another local day: never served, not even stale.
            return (storedAt, storedAt)
        }
        let expires = min(storedAt + max(.zero, maxTTL), endOfToday)
        return (expires, min(expires + staleIfError, endOfToday))
    }
}

/// `progress.any`: permanent once the body's boolean `field` is `true`; `ttlWhileFalse` otherwise.
struct PermanentWhenTrueExpiry: Expiry {
    var field: String
    var ttlWhileFalse: Duration

    func lifetimes(body: [UInt8], storedAt: Date, staleIfError: Duration) -> (expiresAt: Date, staleUntil: Date) {
        if JSONFields.bool(field, in: body) == true { return (.distantFuture, .distantFuture) }
        let expires = storedAt + max(.zero, ttlWhileFalse)
        return (expires, expires + staleIfError)
    }
}

/// The resources' body-reading policies, built like the core's own (`.ttl`, `.untilLocalMidnight`).
extension FreshnessPolicy {
    /// `health.today`: fresh while `field` is today in `timeZone`, at most `maxTTL` (15 min).
    static func todayTimestamp(
        field: String = "latestSampleTimestamp", timeZone: TimeZone, maxTTL: Duration = .seconds(15 * 60)
    ) -> FreshnessPolicy {
        FreshnessPolicy(lifetime: .expiry(TodayTimestampExpiry(field: field, timeZone: timeZone, maxTTL: maxTTL)))
    }

    /// `progress.any`: permanent once `field` is true, `ttlWhileFalse` (1 h) before.
    static func permanentWhenTrue(field: String = "answered", ttlWhileFalse: Duration = .seconds(3600)) -> FreshnessPolicy {
        FreshnessPolicy(lifetime: .expiry(PermanentWhenTrueExpiry(field: field, ttlWhileFalse: ttlWhileFalse)))
    }
}
