import Foundation

/// How long a namespace's values stay fresh, how long they may be served stale after an
/// upstream failure, how long a "not found" is remembered, and whether reads refresh ahead.
///
/// A value type: the app keeps one per namespace, or builds one per request when the policy
/// depends on request parameters (a time zone, a date). Lifetimes are computed once, when an
/// entry is stored (`lifetimes(body:storedAt:)`); only `refreshAhead` is evaluated at read time.
public struct FreshnessPolicy: Sendable {
    public enum Lifetime: Sendable {
        /// Fresh for a fixed time.
        case ttl(TimeInterval)
        /// Fresh for at most `maxTTL`, and only while the body's timestamp `field` (ISO 8601)
        /// falls on today in `timeZone`. A null or missing timestamp is stale at once; a timestamp
        /// from another local day is never served, not even stale. No entry outlives its local day.
        case todayTimestamp(field: String, timeZone: TimeZone, maxTTL: TimeInterval)
        /// Fresh until the next local midnight in `timeZone` (DST-correct).
        case untilLocalMidnight(TimeZone)
        /// Permanent once the body's boolean `field` is `true`; `ttlWhileFalse` otherwise.
        case permanentWhenTrue(field: String, ttlWhileFalse: TimeInterval)
    }

    public var lifetime: Lifetime
    /// How long past expiry a stored copy may be served when the upstream fails.
    public var staleIfError: TimeInterval
    /// How long an upstream "not found" is remembered.
    public var negativeTTL: TimeInterval
    /// A read-time rule that serves the cached value stale and refreshes it in the background.
    public var refreshAhead: RefreshAheadRule?

    public static let defaultStaleIfError: TimeInterval = 24 * 3600
    public static let defaultNegativeTTL: TimeInterval = 60

    public init(
        lifetime: Lifetime, staleIfError: TimeInterval = FreshnessPolicy.defaultStaleIfError,
        negativeTTL: TimeInterval = FreshnessPolicy.defaultNegativeTTL, refreshAhead: RefreshAheadRule? = nil
    ) {
        self.lifetime = lifetime
        self.staleIfError = max(0, staleIfError)
        self.negativeTTL = max(0, negativeTTL)
        self.refreshAhead = refreshAhead
    }

    /// A fixed TTL.
    public static func ttl(_ seconds: TimeInterval) -> FreshnessPolicy {
        FreshnessPolicy(lifetime: .ttl(seconds))
    }

    /// `health.today`: fresh while `field` is today in `timeZone`, at most `maxTTL` (15 min).
    public static func todayTimestamp(
        field: String = "latestSampleTimestamp", timeZone: TimeZone, maxTTL: TimeInterval = 15 * 60
    ) -> FreshnessPolicy {
        FreshnessPolicy(lifetime: .todayTimestamp(field: field, timeZone: timeZone, maxTTL: maxTTL))
    }

    /// `progress.today`: fresh until local midnight in `timeZone`.
    public static func untilLocalMidnight(_ timeZone: TimeZone) -> FreshnessPolicy {
        FreshnessPolicy(lifetime: .untilLocalMidnight(timeZone))
    }

    /// `progress.any`: permanent once `field` is true, `ttlWhileFalse` (1 h) before.
    public static func permanentWhenTrue(field: String = "answered", ttlWhileFalse: TimeInterval = 3600)
        -> FreshnessPolicy
    {
        FreshnessPolicy(lifetime: .permanentWhenTrue(field: field, ttlWhileFalse: ttlWhileFalse))
    }

    /// `health.metrics`: `todayTTL` (5 min) when `date` (yyyy-mm-dd) is today or later in `timeZone`
    /// at `now`, `pastTTL` (24 h) when it is a past day. An unparsable date gets `todayTTL`.
    public static func forDate(
        _ date: String, timeZone: TimeZone, now: Date,
        todayTTL: TimeInterval = 5 * 60, pastTTL: TimeInterval = 24 * 3600
    ) -> FreshnessPolicy {
        let today = LocalTime.dayString(of: now, in: timeZone)
        let isPast = LocalTime.isValidDayString(date) && date < today
        return .ttl(isPast ? pastTTL : todayTTL)
    }

    /// The policy with a refresh-ahead rule.
    public func refreshingAhead(_ rule: RefreshAheadRule) -> FreshnessPolicy {
        var copy = self
        copy.refreshAhead = rule
        return copy
    }

    /// The lifetimes of a value with `body` stored at `storedAt`.
    public func lifetimes(body: [UInt8], storedAt: Date) -> (expiresAt: Date, staleUntil: Date) {
        switch lifetime {
        case .ttl(let seconds):
            let expires = storedAt.addingTimeInterval(max(0, seconds))
            return (expires, expires.addingTimeInterval(staleIfError))
        case .untilLocalMidnight(let zone):
            let expires = LocalTime.endOfDay(containing: storedAt, in: zone)
            return (expires, expires.addingTimeInterval(staleIfError))
        case .permanentWhenTrue(let field, let ttlWhileFalse):
            if JSONFields.bool(field, in: body) == true { return (.distantFuture, .distantFuture) }
            let expires = storedAt.addingTimeInterval(max(0, ttlWhileFalse))
            return (expires, expires.addingTimeInterval(staleIfError))
        case .todayTimestamp(let field, let zone, let maxTTL):
            let endOfToday = LocalTime.endOfDay(containing: storedAt, in: zone)
            guard let stamp = JSONFields.timestamp(field, in: body) else {
                // Null or missing: stale at once, servable on error until the day ends.
                return (storedAt, min(storedAt.addingTimeInterval(staleIfError), endOfToday))
            }
            guard LocalTime.sameDay(stamp, storedAt, in: zone) else {
                // From another local day: never served, not even stale.
                return (storedAt, storedAt)
            }
            let expires = min(storedAt.addingTimeInterval(max(0, maxTTL)), endOfToday)
            return (expires, min(expires.addingTimeInterval(staleIfError), endOfToday))
        }
    }

    /// The lifetimes of a remembered "not found" stored at `storedAt` (never served stale).
    public func negativeLifetimes(storedAt: Date) -> (expiresAt: Date, staleUntil: Date) {
        let expires = storedAt.addingTimeInterval(negativeTTL)
        return (expires, expires)
    }
}
