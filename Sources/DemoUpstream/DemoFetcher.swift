import Clocks
import Foundation
import UnifiedCache

/// How a demo fetcher waits out its simulated latency; tests inject one that returns at once.
public typealias DemoSleeper = @Sendable (Duration) async throws -> Void

/// Deterministic, plausible demo data for every namespace of the four domains
/// (health, activities, subscription, progress), after a configurable latency.
///
/// The same (user, date, parameters) always gives the same bytes: a stable hash of them
/// seeds a small PRNG. "Now" (today's date, health.today's hours) comes from the injected
/// `WallClock`. Demo fetchers never fail for a namespace they know; an unknown namespace
/// is `.notFound`.
public struct DemoFetcher: Fetcher {
    /// The generator of each namespace this fetcher knows.
    static let generators: [String: @Sendable (DemoInput) -> any Encodable] = [
        "health.today": healthToday, "health.averages": healthAverages, "health.metrics": healthMetric,
        "wellness": wellness, "scores": scores,
        "activities": activities, "streams": streams, "subscription": subscription,
        "profile": profile, "progress.history": progressHistory, "progress.streak": progressStreak,
        "progress.today": progressToday, "progress.any": progressAny,
    ]

    /// The namespaces this fetcher generates data for.
    public static let namespaces: Set<String> = Set(generators.keys)

    public let latency: Duration
    let clock: any WallClock
    private let sleeper: DemoSleeper

    public init(
        latency: Duration = .milliseconds(200),
        clock: any WallClock,
        sleeper: @escaping DemoSleeper
    ) {
        self.latency = latency
        self.clock = clock
        self.sleeper = sleeper
    }

    public func fetch(_ request: FetchRequest) async throws(FetchError) -> FetchedValue {
        if latency > .zero {
            // A cancelled wait only shortens the simulated latency; the data is still produced.
            try? await sleeper(latency)
        }
        guard let body = body(for: request) else { throw .notFound }
        return FetchedValue(body: body, contentType: "application/json", storable: true)
    }

    /// The JSON body for a request, or `nil` for an unknown namespace.
    func body(for request: FetchRequest) -> [UInt8]? {
        guard let generate = Self.generators[request.namespace] else { return nil }
        return Self.encode(generate(DemoInput(request: request, now: clock.now())))
    }

    /// Sorted keys make the bytes independent of dictionary order.
    static func encode(_ value: some Encodable) -> [UInt8]? {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        return (try? encoder.encode(value)).map { Array($0) }
    }
}

/// What every generator reads: the user, the parameters, "now" and the local calendar.
struct DemoInput: Sendable {
    let user: String
    let parameters: [String: String]
    let now: Date
    let dates: DemoDates

    init(request: FetchRequest, now: Date) {
        user = request.user ?? "anonymous"
        parameters = request.parameters
        self.now = now
        dates = DemoDates(timeZoneIdentifier: request.parameters["tz"])
    }

    /// Today in the request's zone (UTC without `tz`).
    var today: String { dates.day(of: now) }

    /// The `date` parameter, or today.
    var date: String { parameters["date"] ?? today }

    /// The `days` parameter clamped to `range`, or `fallback`.
    func days(fallback: Int, range: ClosedRange<Int>) -> Int {
        let value = parameters["days"].flatMap { Int($0) } ?? fallback
        return min(max(value, range.lowerBound), range.upperBound)
    }
}
