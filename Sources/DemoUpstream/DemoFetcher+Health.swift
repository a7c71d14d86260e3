import Foundation

/// health.today, health.averages, health.metrics, wellness and scores.
extension DemoFetcher {
    struct HourlyEnergy: Encodable {
        let hour: Int
        /// Cumulative active energy from local midnight to the end of this hour (or to now).
        let activeEnergyKcal: Double
    }

    struct DayTotals: Encodable {
        let activeEnergyKcal: Double
        let steps: Int
        let exerciseMinutes: Int
    }

    struct HealthToday: Encodable {
        let date: String
        let timeZone: String
        let hourly: [HourlyEnergy]
        let latestSampleTimestamp: String?
        let totals: DayTotals
    }

    struct HealthAverages: Encodable {
        let weekday: Int
        let timeZone: String
        /// Average active energy burnt in each local hour 0–23 on this weekday.
        let averageHourlyPattern: [Double]
        let projectedTotal: Double
        let sampleWeeks: Int
    }

    struct HealthMetric: Encodable {
        let metric: String
        let date: String
        let value: Double
        let unit: String
    }

    struct WellnessDay: Encodable {
        let date: String
        let hrvMs: Double
        let restingHeartRateBpm: Double
        let sleepHours: Double
        let readinessScore: Int
    }

    struct Scores: Encodable {
        let date: String
        let readinessScore: Int
        let strainScore: Double
        let sleepScore: Int
    }

    /// How active people are in each local hour, relative to the day's total (sums to 1).
    static let hourWeights: [Double] = {
        let shape: [Double] = [
            0.2, 0.1, 0.1, 0.1, 0.1, 0.3, 1.5, 3.0, 4.0, 3.0, 2.5, 3.0,
            4.0, 3.5, 2.5, 2.5, 3.0, 5.0, 6.0, 4.5, 3.0, 2.0, 1.0, 0.5,
        ]
        let sum = shape.reduce(0, +)
        return shape.map { $0 / sum }
    }()

    /// A user's typical daily active energy, 300–800 kcal.
    static func dailyTarget(user: String) -> Double {
        var random = DemoRandom("energy-target", user)
        return random.double(in: 300...800, places: 0)
    }

    /// Active energy burnt in each hour of one day (not cumulative).
    static func hourlyEnergy(user: String, day: String) -> [Double] {
        var random = DemoRandom("energy-day", user, day)
        let target = dailyTarget(user: user) * random.double(in: 0.6...1.4, places: 3)
        return hourlyPattern(of: target, spread: 0.5...1.5, random: &random)
    }

    /// `total` spread over the hours by `hourWeights`, each hour's share scaled by a factor drawn from `spread`.
    static func hourlyPattern(of total: Double, spread: ClosedRange<Double>, random: inout DemoRandom) -> [Double] {
        hourWeights.map { weight in (total * weight * random.double(in: spread, places: 3)).rounded(places: 1) }
    }

    static func healthToday(_ input: DemoInput) -> HealthToday {
        let today = input.today
        let perHour = hourlyEnergy(user: input.user, day: today)
        let (currentHour, minute) = input.dates.hourAndMinute(of: input.now)
        var cumulative = 0.0
        var hourly: [HourlyEnergy] = []
        for hour in 0...currentHour {
            let share = hour == currentHour ? Double(minute) / 60 : 1
            cumulative += perHour[hour] * share
            hourly.append(HourlyEnergy(hour: hour, activeEnergyKcal: cumulative.rounded(places: 1)))
        }
        // The newest sample is from the current minute: always within today in the zone.
        let latest = Date(timeIntervalSince1970: (input.now.timeIntervalSince1970 / 60).rounded(.down) * 60)
        let total = cumulative.rounded(places: 1)
        return HealthToday(
            date: today,
            timeZone: input.dates.timeZoneName,
            hourly: hourly,
            latestSampleTimestamp: input.dates.timestamp(max(latest, input.dates.startOfDay(input.now))),
            totals: DayTotals(activeEnergyKcal: total, steps: Int(total * 24), exerciseMinutes: Int(total / 9))
        )
    }

    static func healthAverages(_ input: DemoInput) -> HealthAverages {
        let weekday = input.parameters["weekday"].flatMap { Int($0) } ?? 1
        var random = DemoRandom("averages", input.user, String(weekday))
        let target = dailyTarget(user: input.user) * random.double(in: 0.85...1.15, places: 3)
        let pattern = hourlyPattern(of: target, spread: 0.85...1.15, random: &random)
        return HealthAverages(
            weekday: weekday,
            timeZone: input.dates.timeZoneName,
            averageHourlyPattern: pattern,
            projectedTotal: pattern.reduce(0, +).rounded(places: 1),
            sampleWeeks: random.int(in: 4...12)
        )
    }

    static func healthMetric(_ input: DemoInput) -> HealthMetric {
        let metric = input.parameters["metric"] ?? "hrv"
        let date = input.date
        let day = wellnessDay(user: input.user, date: date)
        switch metric {
        case "rhr": return HealthMetric(metric: metric, date: date, value: day.restingHeartRateBpm, unit: "bpm")
        case "sleep": return HealthMetric(metric: metric, date: date, value: day.sleepHours, unit: "hours")
        default: return HealthMetric(metric: metric, date: date, value: day.hrvMs, unit: "ms")
        }
    }

    /// One day's recovery figures; health.metrics, wellness and scores agree on them.
    static func wellnessDay(user: String, date: String) -> WellnessDay {
        var baseline = DemoRandom("wellness-baseline", user)
        let hrvBase = baseline.double(in: 35...85)
        let rhrBase = baseline.double(in: 50...68)
        var random = DemoRandom("wellness-day", user, date)
        let hrv = (hrvBase * random.double(in: 0.75...1.25, places: 3)).rounded(places: 1)
        let rhr = (rhrBase + random.double(in: -4...4)).rounded(places: 0)
        let sleep = random.double(in: 5.2...8.8)
        let readiness = Int((hrv / hrvBase * 50 + (sleep - 5) * 8 + (rhrBase - rhr) * 2).rounded())
        return WellnessDay(
            date: date, hrvMs: hrv, restingHeartRateBpm: rhr, sleepHours: sleep,
            readinessScore: min(max(readiness, 1), 100)
        )
    }

    static func wellness(_ input: DemoInput) -> DayWindow<WellnessDay> {
        let count = input.days(fallback: 30, range: 1...90)
        let entries = input.dates.days(endingAt: input.now, count: count).map {
            wellnessDay(user: input.user, date: $0)
        }
        return DayWindow(days: count, entries: entries)
    }

    static func scores(_ input: DemoInput) -> Scores {
        let day = wellnessDay(user: input.user, date: input.date)
        var random = DemoRandom("scores", input.user, input.date)
        let sleepScore = Int(((day.sleepHours - 4) / 5 * 100).rounded())
        return Scores(
            date: day.date,
            readinessScore: day.readinessScore,
            strainScore: random.double(in: 4...19),
            sleepScore: min(max(sleepScore, 1), 100)
        )
    }
}
