import Foundation
import Testing
import UnifiedCache

@testable import DemoUpstream

/// The fields the contract names, with plausible values.
@Suite(.timeLimit(.minutes(10))) struct DemoFetcherFieldTests {
    typealias Subject = DemoFetcherTests

    static func fetchJSON(_ namespace: String, _ parameters: [String: String] = [:], at date: Date = Subject.noon) async throws -> [String: Any] {
        try Subject.json(try await Subject.fetcher(at: date).fetch(Subject.request(namespace, parameters)))
    }

    static func localDay(_ date: Date, _ zone: String) throws -> String {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = try #require(TimeZone(identifier: zone))
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", parts.year ?? 0, parts.month ?? 0, parts.day ?? 0)
    }

    /// Tokyo is UTC+9: 14:55Z is 23:55 on the 10th, 15:05Z is 00:05 on the 11th.
    @Test(arguments: [
        (1_773_154_500.0, "Asia/Tokyo", "2026-03-10", 23),  // 2026-03-10T14:55:00Z
        (1_773_155_100.0, "Asia/Tokyo", "2026-03-11", 0),  // 2026-03-10T15:05:00Z
        (1_773_187_140.0, "America/Los_Angeles", "2026-03-10", 16),  // 2026-03-10T23:59:00Z, UTC-7
        (1_773_187_260.0, "UTC", "2026-03-11", 0),  // 2026-03-11T00:01:00Z
    ])
    func healthTodayIsTodayInTheZone(epoch: Double, zone: String, day: String, hour: Int) async throws {
        let now = Date(timeIntervalSince1970: epoch)
        let body = try await Self.fetchJSON("health.today", ["tz": zone], at: now)
        #expect(body["date"] as? String == day)
        #expect(body["timeZone"] as? String == zone)
        let stamp = try #require(body["latestSampleTimestamp"] as? String)
        let parsed = try #require(ISO8601DateFormatter().date(from: stamp))
        #expect(try Self.localDay(parsed, zone) == day)
        #expect(parsed <= now)
        #expect(stamp.hasSuffix("Z") || stamp.contains("+") || stamp.dropFirst(19).contains("-"))
        let hourly = try #require(body["hourly"] as? [[String: Any]])
        #expect(hourly.count == hour + 1)
        #expect(hourly.last?["hour"] as? Int == hour)
        let cumulative = hourly.compactMap { $0["activeEnergyKcal"] as? Double }
        #expect(cumulative.count == hourly.count)
        #expect(zip(cumulative, cumulative.dropFirst()).allSatisfy { $0 <= $1 })
        let totals = try #require(body["totals"] as? [String: Any])
        #expect(totals["activeEnergyKcal"] as? Double == cumulative.last)
    }

    @Test func averagesHaveTwentyFourHoursAndATotal() async throws {
        let body = try await Self.fetchJSON("health.averages", ["weekday": "5"])
        #expect(body["weekday"] as? Int == 5)
        let pattern = try #require(body["averageHourlyPattern"] as? [Double])
        #expect(pattern.count == 24)
        #expect(pattern.allSatisfy { $0 >= 0 })
        let total = try #require(body["projectedTotal"] as? Double)
        #expect(abs(total - pattern.reduce(0, +)) < 0.5)
        #expect((4...12).contains(try #require(body["sampleWeeks"] as? Int)))
    }

    @Test(arguments: [("hrv", "ms", 10.0...200.0), ("rhr", "bpm", 35.0...90.0), ("sleep", "hours", 3.0...12.0)])
    func metricsCarryAPlausibleValueAndUnit(metric: String, unit: String, range: ClosedRange<Double>) async throws {
        let body = try await Self.fetchJSON("health.metrics", ["metric": metric, "date": "2026-02-14"])
        #expect(body["metric"] as? String == metric)
        #expect(body["date"] as? String == "2026-02-14")
        #expect(body["unit"] as? String == unit)
        #expect(range.contains(try #require(body["value"] as? Double)))
    }

    @Test func wellnessHasOneEntryPerDayEndingToday() async throws {
        let body = try await Self.fetchJSON("wellness", ["days": "7"])
        #expect(body["days"] as? Int == 7)
        let entries = try #require(body["entries"] as? [[String: Any]])
        #expect(entries.count == 7)
        #expect(entries.last?["date"] as? String == "2026-03-10")
        #expect(entries.first?["date"] as? String == "2026-03-04")
        let scores = try await Self.fetchJSON("scores", ["date": "2026-03-10"])
        #expect(scores["readinessScore"] as? Int == entries.last?["readinessScore"] as? Int)
        #expect(scores["strainScore"] is Double)
        #expect(scores["sleepScore"] is Int)
    }

    @Test func activitiesAreFilteredAndTheHeatmapCoversEveryDay() async throws {
        let body = try await Self.fetchJSON("activities", ["days": "90", "types": "ride,run"])
        #expect(body["days"] as? Int == 90)
        let activities = try #require(body["activities"] as? [[String: Any]])
        #expect(activities.allSatisfy { ["ride", "run"].contains($0["type"] as? String ?? "") })
        for activity in activities {
            #expect(activity["id"] is String)
            #expect(ISO8601DateFormatter().date(from: activity["start"] as? String ?? "") != nil)
            #expect((activity["durationSeconds"] as? Int ?? 0) > 0)
            #expect(activity["distanceMeters"] is Double)
        }
        let heatmap = try #require(body["heatmap"] as? [[String: Any]])
        #expect(heatmap.count == 90)
        #expect(heatmap.reduce(0) { $0 + ($1["count"] as? Int ?? 0) } == activities.count)

        let all = try await Self.fetchJSON("activities", ["days": "90"])
        let everything = try #require(all["activities"] as? [[String: Any]])
        #expect(everything.count >= activities.count)
        #expect(!everything.isEmpty)
    }

    @Test func streamsAreParallelArrays() async throws {
        let body = try await Self.fetchJSON("streams", ["id": "ride-abc"])
        #expect(body["activityId"] as? String == "ride-abc")
        let time = try #require(body["time"] as? [Int])
        #expect(time.count > 10)
        #expect((body["heartrate"] as? [Int])?.count == time.count)
        #expect((body["watts"] as? [Int])?.count == time.count)
        #expect((body["distance"] as? [Double])?.count == time.count)
    }

    @Test func subscriptionProfileAndProgress() async throws {
        for user in ["alice", "bob", "carol", "dave", "erin", "frank"] {
            let parameters = ["tz": "UTC"]
            let fetcher = Subject.fetcher()
            let subscription = try Subject.json(try await fetcher.fetch(Subject.request("subscription", user: user)))
            let status = try #require(subscription["status"] as? String)
            #expect(["active", "trial", "expired"].contains(status))
            #expect(subscription["plan"] is String)
            #expect(status == "expired" ? subscription["renewsAt"] is NSNull : subscription["renewsAt"] is String)

            let streak = try Subject.json(try await fetcher.fetch(Subject.request("progress.streak", user: user)))
            let current = try #require(streak["current"] as? Int)
            let longest = try #require(streak["longest"] as? Int)
            #expect(current <= longest)

            let today = try Subject.json(try await fetcher.fetch(Subject.request("progress.today", user: user, parameters)))
            #expect(today["date"] as? String == "2026-03-10")
            #expect(today["answered"] is Bool)

            let any = try Subject.json(try await fetcher.fetch(Subject.request("progress.any", user: user)))
            let answered = try #require(any["answered"] as? Bool)
            let history = try Subject.json(try await fetcher.fetch(Subject.request("progress.history", user: user)))
            let entries = try #require(history["entries"] as? [[String: Any]])
            #expect(answered == entries.contains { $0["answered"] as? Bool == true })

            let profile = try Subject.json(try await fetcher.fetch(Subject.request("profile", user: user)))
            #expect(profile["user"] as? String == user)
        }
    }
}
