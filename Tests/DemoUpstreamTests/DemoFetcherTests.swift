import Foundation
import NIOConcurrencyHelpers
import Testing
import TestSupport
import UnifiedCache

@testable import DemoUpstream

@Suite(.timeLimit(.minutes(10))) struct DemoFetcherTests {
    /// 2026-03-10 12:34:56 UTC.
    static let noon = Date(timeIntervalSince1970: 1_773_146_096)

    static func fetcher(at date: Date = noon) -> DemoFetcher {
        DemoFetcher(latency: .zero, clock: ManualWallClock(date), sleeper: { _ in })
    }

    static func request(
        _ namespace: String, user: String = "alice", _ parameters: [String: String] = [:]
    ) -> FetchRequest {
        FetchRequest(key: "\(namespace):\(user)", namespace: namespace, user: user, path: "/users/\(user)/x", parameters: parameters)
    }

    /// One request per namespace, with the parameters the app would pass.
    static let samples: [FetchRequest] = [
        request("health.today", ["tz": "Europe/Berlin"]),
        request("health.averages", ["weekday": "3", "tz": "UTC"]),
        request("health.metrics", ["metric": "hrv", "date": "2026-03-01"]),
        request("health.metrics", ["metric": "rhr", "date": "2026-03-01"]),
        request("health.metrics", ["metric": "sleep", "date": "2026-03-01"]),
        request("wellness", ["days": "30"]),
        request("scores", ["date": "2026-03-01"]),
        request("activities", ["days": "30", "types": "ride,run"]),
        request("streams", ["id": "run-1a2b3c"]),
        request("subscription"),
        request("profile"),
        request("progress.history"),
        request("progress.streak"),
        request("progress.today", ["tz": "UTC"]),
        request("progress.any"),
    ]

    static func json(_ value: FetchedValue) throws -> [String: Any] {
        try #require(JSONSerialization.jsonObject(with: Data(value.body)) as? [String: Any])
    }

    @Test(arguments: samples)
    func sameInputsGiveSameBytes(request: FetchRequest) async throws {
        let first = try await Self.fetcher().fetch(request)
        let second = try await Self.fetcher().fetch(request)
        #expect(first == second)
        #expect(first.contentType == "application/json")
        #expect(first.storable)
        #expect(!first.body.isEmpty)
        _ = try Self.json(first)
    }

    @Test(arguments: ["health.today", "wellness", "activities", "streams", "progress.history", "health.averages"])
    func differentUsersGetDifferentData(namespace: String) async throws {
        let parameters = ["days": "60", "id": "ride-42", "weekday": "2"]
        let alice = try await Self.fetcher().fetch(Self.request(namespace, user: "alice", parameters))
        let bob = try await Self.fetcher().fetch(Self.request(namespace, user: "bob", parameters))
        #expect(alice.body != bob.body)
    }

    @Test(arguments: ["health.metrics", "scores"])
    func differentDatesGetDifferentData(namespace: String) async throws {
        let first = try await Self.fetcher().fetch(Self.request(namespace, ["metric": "hrv", "date": "2026-03-01"]))
        let second = try await Self.fetcher().fetch(Self.request(namespace, ["metric": "hrv", "date": "2026-03-02"]))
        #expect(first.body != second.body)
    }

    @Test func healthTodayChangesWithTheDay() async throws {
        let request = Self.request("health.today")
        let today = try await Self.fetcher().fetch(request)
        let tomorrow = try await Self.fetcher(at: Self.noon.addingTimeInterval(86_400)).fetch(request)
        #expect(try Self.json(today)["date"] as? String == "2026-03-10")
        #expect(try Self.json(tomorrow)["date"] as? String == "2026-03-11")
    }

    @Test func latencyGoesThroughTheInjectedSleeper() async throws {
        let slept = NIOLockedValueBox<[Duration]>([])
        let fetcher = DemoFetcher(
            latency: .milliseconds(200), clock: ManualWallClock(Self.noon),
            sleeper: { duration in slept.withLockedValue { $0.append(duration) } }
        )
        _ = try await fetcher.fetch(Self.request("profile"))
        #expect(slept.withLockedValue { $0 } == [.milliseconds(200)])

        let none = NIOLockedValueBox(0)
        let instant = DemoFetcher(latency: .zero, clock: ManualWallClock(Self.noon), sleeper: { _ in none.withLockedValue { $0 += 1 } })
        _ = try await instant.fetch(Self.request("profile"))
        #expect(none.withLockedValue { $0 } == 0)
    }

    @Test func aFailingSleeperStillProducesData() async throws {
        struct Interrupted: Error {}
        let fetcher = DemoFetcher(latency: .seconds(1), clock: ManualWallClock(Self.noon), sleeper: { _ in throw Interrupted() })
        let value = try await fetcher.fetch(Self.request("subscription"))
        #expect(!value.body.isEmpty)
    }

    @Test func samplesCoverEveryAdvertisedNamespace() {
        #expect(Set(Self.samples.map(\.namespace)) == DemoFetcher.namespaces)
    }

    @Test func unknownNamespaceIsNotFound() async {
        await #expect(throws: FetchError.notFound) {
            try await Self.fetcher().fetch(Self.request("nope"))
        }
    }
}
