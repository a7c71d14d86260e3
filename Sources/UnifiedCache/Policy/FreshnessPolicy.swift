import Clocks
import Foundation

/// How long a namespace's values stay fresh, how long they may be served stale after an
/// upstream failure, how long a "not found" is remembered, and whether reads refresh ahead.
///
/// A value type: the app keeps one per namespace, or builds one per request when the policy
/// depends on request parameters (a time zone, a date). Lifetimes are computed once, when an
/// entry is stored (`lifetimes(body:storedAt:)`); only `refreshAhead` is evaluated at read time.
/// A lifetime that depends on the body is the application's `Expiry`: the core knows no body format.
public struct FreshnessPolicy: Sendable {
    public enum Lifetime: Sendable {
        /// Fresh for a fixed time.
        case ttl(Duration)
        /// Fresh until the next local midnight in `timeZone` (DST-correct).
        case untilLocalMidnight(TimeZone)
        /// Decided by the application's rule, which may read the body (the core reads none).
        case expiry(any Expiry)
    }

    public var lifetime: Lifetime
    /// How long past expiry a stored copy may be served when the upstream fails.
    public var staleIfError: Duration
    /// How long an upstream "not found" is remembered.
    package var negativeTTL: Duration
    /// A read-time rule that serves the cached value stale and refreshes it in the background.
    package var refreshAhead: RefreshAheadRule?

    public static let defaultStaleIfError: Duration = .seconds(24 * 3600)
    public static let defaultNegativeTTL: Duration = .seconds(60)

    public init(
        lifetime: Lifetime, staleIfError: Duration = FreshnessPolicy.defaultStaleIfError,
        negativeTTL: Duration = FreshnessPolicy.defaultNegativeTTL, refreshAhead: RefreshAheadRule? = nil
    ) {
        self.lifetime = lifetime
        self.staleIfError = max(.zero, staleIfError)
        self.negativeTTL = max(.zero, negativeTTL)
        self.refreshAhead = refreshAhead
    }

    /// A fixed TTL.
    public static func ttl(_ span: Duration) -> FreshnessPolicy {
        FreshnessPolicy(lifetime: .ttl(span))
    }

    /// `progress.today`: fresh until local midnight in `timeZone`.
    public static func untilLocalMidnight(_ timeZone: TimeZone) -> FreshnessPolicy {
        FreshnessPolicy(lifetime: .untilLocalMidnight(timeZone))
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
        case .ttl(let span):
            let expires = storedAt + max(.zero, span)
            return (expires, expires + staleIfError)
        case .untilLocalMidnight(let zone):
            let expires = LocalTime.endOfDay(containing: storedAt, in: zone)
            return (expires, expires + staleIfError)
        case .expiry(let rule):
            return rule.lifetimes(body: body, storedAt: storedAt, staleIfError: staleIfError)
        }
    }

    /// The lifetimes of a remembered "not found" stored at `storedAt` (never served stale).
    package func negativeLifetimes(storedAt: Date) -> (expiresAt: Date, staleUntil: Date) {
        let expires = storedAt + negativeTTL
        return (expires, expires)
    }
}
