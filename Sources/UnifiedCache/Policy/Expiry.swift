import Foundation

/// When a stored value stops being fresh, and when it stops being servable even stale, decided once when it is
/// stored (Caffeine's `Expiry`). The core's own lifetimes (`FreshnessPolicy.Lifetime.ttl`, `.untilLocalMidnight`)
/// read no body; a rule that reads one (a timestamp or a flag in it) belongs to the application, which knows
/// the body's format, and reaches the core as `FreshnessPolicy.Lifetime.expiry`.
public protocol Expiry: Sendable {
    /// The lifetimes of a value with `body` stored at `storedAt`. `staleIfError` is the policy's window past
    /// expiry in which a stored copy may be served when the upstream fails; a rule may end it sooner.
    /// `staleUntil` is never before `expiresAt`.
    func lifetimes(body: [UInt8], storedAt: Date, staleIfError: Duration) -> (expiresAt: Date, staleUntil: Date)
}
