import Foundation
import Testing
@testable import UnifiedCache

@Suite(.timeLimit(.minutes(10))) struct FreshnessPolicyTests {
    let berlin = zone("Europe/Berlin")
    let newYork = zone("America/New_York")

    @Test func ttlAndStaleWindow() {
        let now = instant("2026-06-01T12:00:00Z")
        let (expires, stale) = FreshnessPolicy.ttl(.seconds(300)).lifetimes(body: [], storedAt: now)
        #expect(expires == now.addingTimeInterval(300))
        #expect(stale == now.addingTimeInterval(300 + 24 * 3600))
        var custom = FreshnessPolicy.ttl(.seconds(10))
        custom.staleIfError = .seconds(5)
        #expect(custom.lifetimes(body: [], storedAt: now).staleUntil == now.addingTimeInterval(15))
        #expect(custom.negativeLifetimes(storedAt: now) == (now.addingTimeInterval(60), now.addingTimeInterval(60)))
    }

    @Test(arguments: [
        // Berlin spring forward (23-hour day): stored 00:30 CET on the 29th.
        ("Europe/Berlin", "2026-03-28T23:30:00Z", "2026-03-29T22:00:00Z"),
        // Berlin fall back (25-hour day): stored 00:30 CEST on the 25th.
        ("Europe/Berlin", "2026-10-24T22:30:00Z", "2026-10-25T23:00:00Z"),
        // Ordinary Berlin day, just before midnight.
        ("Europe/Berlin", "2026-06-01T21:59:59Z", "2026-06-01T22:00:00Z"),
        // New York fall back and spring forward.
        ("America/New_York", "2026-11-01T04:30:00Z", "2026-11-02T05:00:00Z"),
        ("America/New_York", "2026-03-08T05:30:00Z", "2026-03-09T04:00:00Z"),
        ("UTC", "2026-06-01T00:00:00Z", "2026-06-02T00:00:00Z"),
    ])
    func untilLocalMidnightIsDSTCorrect(zoneID: String, stored: String, midnight: String) {
        let policy = FreshnessPolicy.untilLocalMidnight(zone(zoneID))
        let (expires, stale) = policy.lifetimes(body: [], storedAt: instant(stored))
        #expect(expires == instant(midnight))
        #expect(stale == instant(midnight).addingTimeInterval(24 * 3600))
    }

    @Test func refreshAheadWindow() {
        // Monday 2026-03-09, Berlin (CET, UTC+1).
        let rule = RefreshAheadRule(timeZone: berlin, weekday: 2)
        let stored = instant("2026-03-02T09:00:00Z")
        #expect(rule.shouldRefresh(storedAt: stored, now: instant("2026-03-09T05:00:00Z")))  // 06:00 local
        #expect(rule.shouldRefresh(storedAt: stored, now: instant("2026-03-09T07:59:59Z")))  // 08:59:59
        #expect(!rule.shouldRefresh(storedAt: stored, now: instant("2026-03-09T08:00:00Z")))  // 09:00
        #expect(!rule.shouldRefresh(storedAt: stored, now: instant("2026-03-09T04:59:59Z")))  // 05:59:59
        #expect(!rule.shouldRefresh(storedAt: stored, now: instant("2026-03-10T06:00:00Z")))  // Tuesday
        // Younger than a day: no refresh.
        #expect(!rule.shouldRefresh(storedAt: instant("2026-03-08T06:00:00Z"), now: instant("2026-03-09T06:00:00Z")))
        // After the spring-forward in Berlin, 06:00 local is 04:00Z.
        let summer = RefreshAheadRule(timeZone: berlin)
        #expect(summer.shouldRefresh(storedAt: stored, now: instant("2026-03-30T04:00:00Z")))
        #expect(!summer.shouldRefresh(storedAt: stored, now: instant("2026-03-30T03:59:00Z")))
    }

    @Test func anExpiryDecidesFromTheBodyAndThePolicysStaleWindow() {
        struct BodyLength: Expiry {
            func lifetimes(body: [UInt8], storedAt: Date, staleIfError: Duration) -> (expiresAt: Date, staleUntil: Date) {
                (storedAt + Double(body.count), storedAt + Double(body.count) + staleIfError.seconds)
            }
        }
        var policy = FreshnessPolicy(lifetime: .expiry(BodyLength()))
        policy.staleIfError = .seconds(7)
        let now = instant("2026-06-01T12:00:00Z")
        #expect(policy.lifetimes(body: bytes("abc"), storedAt: now) == (now + 3, now + 10))
    }
}

/// An application's rule as the core sees it: lifetimes counted from storing, whatever the body.
struct FixedExpiry: Expiry {
    /// Fresh this long.
    var fresh: TimeInterval
    /// Servable (stale) until this long after storing; `nil`: the policy's stale-if-error window past freshness.
    var servable: TimeInterval?

    func lifetimes(body: [UInt8], storedAt: Date, staleIfError: Duration) -> (expiresAt: Date, staleUntil: Date) {
        (storedAt + fresh, storedAt + (servable ?? fresh + staleIfError.seconds))
    }
}
