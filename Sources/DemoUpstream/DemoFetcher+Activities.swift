import Foundation

/// activities (list + heatmap by day) and streams.
extension DemoFetcher {
    struct Activity: Encodable {
        let id: String
        let type: String
        let start: String
        let durationSeconds: Int
        let distanceMeters: Double
    }

    struct HeatmapDay: Encodable {
        let date: String
        let count: Int
        let durationSeconds: Int
    }

    struct Activities: Encodable {
        let days: Int
        /// The filter applied; empty means every type.
        let types: [String]
        /// Newest first.
        let activities: [Activity]
        /// One entry per day of the window, oldest first.
        let heatmap: [HeatmapDay]
    }

    struct Streams: Encodable {
        let activityId: String
        let type: String
        let sampleIntervalSeconds: Int
        let time: [Int]
        let heartrate: [Int]
        let distance: [Double]
        let watts: [Int]?
        let paceSecondsPerKm: [Int]?
    }

    /// Per type: speed in m/s and duration in minutes.
    struct Sport {
        let speed: ClosedRange<Double>
        let minutes: ClosedRange<Int>
    }

    static let sports: [String: Sport] = [
        "run": Sport(speed: 2.5...3.8, minutes: 20...90),
        "ride": Sport(speed: 6...9, minutes: 45...180),
        "swim": Sport(speed: 0.6...0.9, minutes: 20...60),
        "walk": Sport(speed: 1.2...1.6, minutes: 20...90),
        "hike": Sport(speed: 0.9...1.3, minutes: 60...240),
    ]

    /// The two to four sports a user does, stable per user.
    static func favouriteSports(user: String) -> [String] {
        var random = DemoRandom("sports", user)
        let shuffled = sports.keys.sorted().shuffled(using: &random)
        return Array(shuffled.prefix(random.int(in: 2...4)))
    }

    /// Every activity of one local day, whatever the filter.
    static func activities(user: String, day: String, dates: DemoDates) -> [Activity] {
        var random = DemoRandom("activities", user, day)
        let roll = random.double(in: 0...1, places: 3)
        let count = roll < 0.45 ? 0 : (roll < 0.85 ? 1 : 2)
        guard count > 0, let midnight = dates.startOfDay(named: day) else { return [] }
        let favourites = favouriteSports(user: user)
        var hour = random.int(in: 6...9)
        return (0..<count).compactMap { index in
            guard let type = random.pick(favourites), let sport = sports[type] else { return nil }
            let minutes = random.int(in: sport.minutes)
            let start = midnight.addingTimeInterval(Double(hour * 3600 + random.int(in: 0...59) * 60))
            hour += 8
            let hash = DemoRandom.stableHash(["activity-id", user, day, String(index)])
            return Activity(
                id: "\(type)-\(String(hash, radix: 16))",
                type: type,
                start: dates.timestamp(start),
                durationSeconds: minutes * 60,
                distanceMeters: (Double(minutes * 60) * random.double(in: sport.speed, places: 2)).rounded(places: 0)
            )
        }
    }

    static func activities(_ input: DemoInput) -> Activities {
        let count = input.days(fallback: 30, range: 1...365)
        let filter = (input.parameters["types"] ?? "")
            .split(separator: ",").map { $0.lowercased() }.filter { !$0.isEmpty }
        var list: [Activity] = []
        var heatmap: [HeatmapDay] = []
        for day in input.dates.days(endingAt: input.now, count: count) {
            let matching = activities(user: input.user, day: day, dates: input.dates)
                .filter { filter.isEmpty || filter.contains($0.type) }
            list.append(contentsOf: matching)
            heatmap.append(HeatmapDay(
                date: day, count: matching.count,
                durationSeconds: matching.reduce(0) { $0 + $1.durationSeconds }
            ))
        }
        return Activities(days: count, types: filter, activities: list.reversed(), heatmap: heatmap)
    }

    static func streams(_ input: DemoInput) -> Streams {
        let id = input.parameters["id"] ?? "activity"
        let prefix = String(id.prefix { $0 != "-" })
        let type = sports[prefix] == nil ? "run" : prefix
        let sport = sports[type] ?? Sport(speed: 2.5...3.8, minutes: 20...90)
        var random = DemoRandom("streams", input.user, id)
        let duration = random.int(in: sport.minutes) * 60
        let interval = max(10, duration / 360)
        var heartrate = Double(random.int(in: 95...115))
        var distance = 0.0
        var samples: (time: [Int], hr: [Int], distance: [Double], speed: [Double]) = ([], [], [], [])
        for second in stride(from: 0, through: duration, by: interval) {
            let speed = random.double(in: sport.speed, places: 2)
            heartrate = min(max(heartrate + random.double(in: -3...4), 90), 185)
            samples.time.append(second)
            samples.hr.append(Int(heartrate))
            samples.distance.append(distance.rounded(places: 1))
            samples.speed.append(speed)
            distance += speed * Double(interval)
        }
        let hasPower = type == "ride" || type == "run"
        let hasPace = type == "run" || type == "walk" || type == "hike"
        return Streams(
            activityId: id, type: type, sampleIntervalSeconds: interval,
            time: samples.time, heartrate: samples.hr, distance: samples.distance,
            watts: hasPower ? samples.speed.map { Int($0 * (type == "ride" ? 28 : 75)) } : nil,
            paceSecondsPerKm: hasPace ? samples.speed.map { Int(1000 / $0) } : nil
        )
    }
}
