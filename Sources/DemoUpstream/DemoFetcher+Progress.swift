import Foundation

/// subscription, profile and the progress namespaces.
extension DemoFetcher {
    struct Subscription: Encodable {
        let status: String
        let plan: String
        /// `nil` (JSON null, not a missing key) once expired.
        let renewsAt: String?

        private enum CodingKeys: String, CodingKey { case status, plan, renewsAt }

        func encode(to encoder: any Encoder) throws {
            var container = encoder.container(keyedBy: CodingKeys.self)
            try container.encode(status, forKey: .status)
            try container.encode(plan, forKey: .plan)
            try container.encode(renewsAt, forKey: .renewsAt)
        }
    }

    struct Profile: Encodable {
        let user: String
        let displayName: String
        let birthYear: Int
        let heightCm: Int
        let weightKg: Double
        let units: String
    }

    struct ProgressDay: Encodable {
        let date: String
        let answered: Bool
    }

    /// The last `days` days, oldest first (wellness, progress.history).
    struct DayWindow<Entry: Encodable>: Encodable {
        let days: Int
        let entries: [Entry]
    }

    struct ProgressStreak: Encodable {
        let current: Int
        let longest: Int
    }

    /// progress.today is one day of progress.history.
    typealias ProgressToday = ProgressDay

    struct ProgressAny: Encodable {
        let answered: Bool
    }

    /// How many days progress.history and progress.streak look back.
    static let progressWindow = 90

    static func subscription(_ input: DemoInput) -> Subscription {
        var random = DemoRandom("subscription", input.user)
        let roll = random.double(in: 0...1, places: 3)
        let plan = random.pick(["monthly", "annual"]) ?? "monthly"
        let midnight = input.dates.startOfDay(input.now)
        if roll < 0.15 {
            return Subscription(status: "expired", plan: plan, renewsAt: nil)
        }
        if roll < 0.35 {
            let end = input.dates.adding(days: random.int(in: 1...14), to: midnight)
            return Subscription(status: "trial", plan: "trial", renewsAt: input.dates.timestamp(end))
        }
        let renewal = input.dates.adding(days: random.int(in: 1...(plan == "annual" ? 365 : 30)), to: midnight)
        return Subscription(status: "active", plan: plan, renewsAt: input.dates.timestamp(renewal))
    }

    static func profile(_ input: DemoInput) -> Profile {
        var random = DemoRandom("profile", input.user)
        let name = input.user.prefix(1).uppercased() + input.user.dropFirst()
        return Profile(
            user: input.user,
            displayName: name,
            birthYear: random.int(in: 1955...2006),
            heightCm: random.int(in: 155...198),
            weightKg: random.double(in: 50...105),
            units: random.chance(0.7) ? "metric" : "imperial"
        )
    }

    /// How often a user answers, 0 for users who never have.
    static func engagement(user: String) -> Double {
        var random = DemoRandom("engagement", user)
        return random.chance(0.2) ? 0 : random.double(in: 0.4...0.95, places: 2)
    }

    static func answered(user: String, day: String) -> Bool {
        var random = DemoRandom("answered", user, day)
        return random.chance(engagement(user: user))
    }

    static func progressDays(_ input: DemoInput) -> [ProgressDay] {
        input.dates.days(endingAt: input.now, count: progressWindow).map {
            ProgressDay(date: $0, answered: answered(user: input.user, day: $0))
        }
    }

    static func progressHistory(_ input: DemoInput) -> DayWindow<ProgressDay> {
        DayWindow(days: progressWindow, entries: progressDays(input))
    }

    /// `current` counts back from today, or from yesterday while today is still open.
    static func progressStreak(_ input: DemoInput) -> ProgressStreak {
        let days = progressDays(input)
        var longest = 0
        var run = 0
        for day in days {
            run = day.answered ? run + 1 : 0
            longest = max(longest, run)
        }
        let open = days.last?.answered == false ? days.dropLast() : days[...]
        let current = open.reversed().prefix { $0.answered }.count
        return ProgressStreak(current: current, longest: longest)
    }

    static func progressToday(_ input: DemoInput) -> ProgressToday {
        let today = input.today
        return ProgressToday(date: today, answered: answered(user: input.user, day: today))
    }

    static func progressAny(_ input: DemoInput) -> ProgressAny {
        ProgressAny(answered: engagement(user: input.user) > 0)
    }
}
