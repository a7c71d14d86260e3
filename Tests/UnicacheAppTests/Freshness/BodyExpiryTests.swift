import Foundation
@testable import Settings
import Testing
import UnifiedCache

@testable import UnicacheApp

/// The resources' body-reading freshness rules (`health.today`, `progress.any`), which the cache core asks
/// through its `Expiry` protocol.
@Suite(.timeLimit(.minutes(10))) struct BodyExpiryTests {
    let berlin = Self.zone("Europe/Berlin")
    let newYork = Self.zone("America/New_York")

    static func zone(_ identifier: String) -> TimeZone { TimeZone(identifier: identifier) ?? .gmt }

    @Test func todayTimestampFreshForAtMostMaxTTL() {
        let policy = FreshnessPolicy.todayTimestamp(timeZone: berlin)
        let now = instant("2026-06-01T10:00:00Z")  // 12:00 in Berlin
        let body = bytes(#"{"latestSampleTimestamp":"2026-06-01T11:55:00+02:00","total":5}"#)
        let (expires, stale) = policy.lifetimes(body: body, storedAt: now)
        #expect(expires == now.addingTimeInterval(15 * 60))
        #expect(stale == instant("2026-06-01T22:00:00Z"))  // the stale window ends at local midnight
    }

    @Test func todayTimestampIsCappedAtLocalMidnightOnTheDSTDay() {
        let policy = FreshnessPolicy.todayTimestamp(timeZone: berlin)
        let now = instant("2026-10-25T22:50:00Z")  // 23:50 CET on the 25-hour day
        let body = bytes(#"{"latestSampleTimestamp":"2026-10-25T23:40:00+01:00"}"#)
        let (expires, stale) = policy.lifetimes(body: body, storedAt: now)
        #expect(expires == instant("2026-10-25T23:00:00Z"))
        #expect(stale == expires)
    }

    @Test func todayTimestampUsesTheLocalDayNotUTC() {
        let policy = FreshnessPolicy.todayTimestamp(timeZone: berlin)
        let now = instant("2026-10-25T23:10:00Z")  // 00:10 on the 26th in Berlin
        // 00:05 on the 26th in Berlin although the 25th in UTC: today.
        let today = bytes(#"{"latestSampleTimestamp":"2026-10-25T23:05:00Z"}"#)
        #expect(policy.lifetimes(body: today, storedAt: now).expiresAt == now.addingTimeInterval(900))
        // 23:55 on the 25th in Berlin: an earlier day, never served, not even stale.
        let yesterday = bytes(#"{"latestSampleTimestamp":"2026-10-25T22:55:00Z"}"#)
        let (expires, stale) = policy.lifetimes(body: yesterday, storedAt: now)
        #expect(expires == now && stale == now)
    }

    @Test func todayTimestampInNewYorkAcrossSpringForward() {
        let policy = FreshnessPolicy.todayTimestamp(timeZone: newYork)
        let now = instant("2026-03-08T07:30:00Z")  // 03:30 EDT
        let body = bytes(#"{"latestSampleTimestamp":"2026-03-08T01:30:00-05:00"}"#)
        #expect(policy.lifetimes(body: body, storedAt: now).expiresAt == now.addingTimeInterval(900))
        let previous = bytes(#"{"latestSampleTimestamp":"2026-03-07T23:59:59-05:00"}"#)
        #expect(policy.lifetimes(body: previous, storedAt: now).staleUntil == now)
    }

    @Test(arguments: [
        #"{"latestSampleTimestamp":null}"#, #"{"other":1}"#, #"{"latestSampleTimestamp":12}"#,
        #"{"latestSampleTimestamp":"yesterday"}"#, "not json",
    ])
    func todayTimestampNullOrMissingIsStaleAtOnce(body: String) {
        let policy = FreshnessPolicy.todayTimestamp(timeZone: berlin)
        let now = instant("2026-06-01T20:00:00Z")  // 22:00 in Berlin
        let (expires, stale) = policy.lifetimes(body: bytes(body), storedAt: now)
        #expect(expires == now)
        #expect(stale == instant("2026-06-01T22:00:00Z"))  // servable on error only until the day ends
    }

    @Test func permanentOnceAnswered() {
        let policy = FreshnessPolicy.permanentWhenTrue(field: "answered", ttlWhileFalse: .seconds(3600))
        let now = instant("2026-06-01T12:00:00Z")
        #expect(policy.lifetimes(body: bytes(#"{"answered":true}"#), storedAt: now).expiresAt == .distantFuture)
        #expect(policy.lifetimes(body: bytes(#"{"answered":false}"#), storedAt: now).expiresAt == now + 3600)
        #expect(policy.lifetimes(body: bytes(#"{"answered":1}"#), storedAt: now).expiresAt == now + 3600)
        #expect(policy.lifetimes(body: bytes(#"{"answered":"true"}"#), storedAt: now).expiresAt == now + 3600)
        let overridden = FreshnessPolicy.permanentWhenTrue(ttlWhileFalse: .seconds(60))
        #expect(overridden.lifetimes(body: bytes("{}"), storedAt: now).expiresAt == now + 60)
    }

    @Test func timestampParsing() {
        #expect(ISO8601Timestamp.parse("2026-06-01T12:00:00Z") == Date(timeIntervalSince1970: 1_780_315_200))
        #expect(ISO8601Timestamp.parse("2026-06-01T14:00:00+02:00") == instant("2026-06-01T12:00:00Z"))
        #expect(ISO8601Timestamp.parse("2026-06-01T12:00:00.250Z") == instant("2026-06-01T12:00:00Z") + 0.25)
        #expect(ISO8601Timestamp.parse("2026-06-01") == nil)
    }
}

/// Test input is always valid.
private func instant(_ text: String) -> Date { ISO8601Timestamp.parse(text) ?? Date(timeIntervalSince1970: 0) }

private func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }
