import ClocksTesting
import Foundation
@testable import Settings
import TestSupport
import Testing
import UnifiedCache
import UpstreamGate

@testable import UnicacheApp

/// CONTRACT §15 through the whole service and a real upstream, on a gate clock moved by hand, with the default user
/// share (10 %): one user refreshing in a loop or bursting distinct keys spends their share and no more, and another
/// user's cold request is still fetched; a budget everyone spent is still 503; one user's fetches in flight are
/// bounded while others' go ahead; `--refresh-interval` answers a forced refresh from a recent copy.
@Suite(.serialized, .timeLimit(.minutes(2))) struct FairShareTests {
    static func subscriptionBudget(_ limit: Int) -> [UpstreamDomain: UpstreamProtection] {
        [.subscription: UpstreamProtection(budgets: [RateWindow(limit: limit, window: .seconds(60))])]
    }

    /// The issue's reproduction: 25 forced refreshes of one user under `subscription=20/1m` used to spend the whole
    /// budget, and the next user's cold request answered 503 `upstream-budget-spent`.
    @Test func oneUserRefreshingInALoopLeavesTheBudgetToEveryoneElse() async throws {
        let collector = LineCollector()
        try await withService(
            LiveService.start(
                protection: Self.subscriptionBudget(20), gateClock: ManualClock(),
                logger: RequestCorrelationTests.jsonLogger(collector))
        ) { live in
            var refreshes: [LiveService.Answer] = []
            for attempt in 0..<25 {
                refreshes.append(
                    try await live.request(
                        .GET, "/v1/users/mallory/subscription?refresh=true", headers: [("X-Request-ID", "r\(attempt)")]))
            }
            let victim = try await live.request(.GET, "/v1/users/victim/subscription")
            // A hit asks no share: mallory's fresh copy is still answered as one.
            let hit = try await live.request(.GET, "/v1/users/mallory/subscription")
            let stats = try await UpstreamProtectionTests.domainStats(live, "subscription")
            let metrics = try await live.request(.GET, "/metrics")
            await live.stop()

            // 10 % of 20: two fetches, both answered 200; the rest are the stored copy, STALE, with the reason.
            #expect(live.upstream.requestCount("/users/mallory/subscription") == 2)
            #expect(refreshes.prefix(2).allSatisfy { $0.status == 200 && $0.header("X-Cache") == "REFRESH" })
            #expect(refreshes.dropFirst(2).allSatisfy {
                $0.status == 200 && $0.header("X-Cache") == "STALE"
                    && $0.header("Cache-Status") == "unicache; hit; fwd=stale; detail=user-budget"
            })
            #expect(victim.status == 200 && victim.header("X-Cache") == "MISS")
            #expect(hit.status == 200 && hit.header("X-Cache") == "HIT")
            #expect((stats["rejected"] as? [String: Int])?["user"] == 23)
            #expect((stats["rejected"] as? [String: Int])?["rate"] == 0)
            #expect(stats["budgetRemaining"] as? Int == 17)
            #expect(metrics.body.contains(#"unicache_upstream_rejected_total{domain="subscription",reason="user"} 23"#))
            // The access log line of a refused request names the reason.
            let line = try #require(try TraceContextTests.requestLine("r24", in: collector))
            let cacheStatus = (line["metadata"] as? [String: Any])?["cacheStatus"] as? String
            #expect(cacheStatus == "unicache; hit; fwd=stale; detail=user-budget")
        }
    }

    /// A burst of distinct cold keys: the user's share is fetched, the rest are 429 problems with `Retry-After` (no
    /// stored copy); other users are fetched until everyone together has spent the budget, then 503 as in §7.
    @Test func aBurstOfDistinctKeysSpendsTheUsersShareAndTheBudgetStaysEveryones() async throws {
        let budget = [UpstreamDomain.activities: UpstreamProtection(budgets: [RateWindow(limit: 20, window: .seconds(60))])]
        try await withService(LiveService.start(protection: budget, gateClock: ManualClock())) { live in
            let burst = try await withThrowingTaskGroup(of: LiveService.Answer.self) { group in
                for id in 0..<30 { group.addTask { try await live.request(.GET, "/v1/users/mallory/activities/\(id)/streams") } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            var others: [Int] = []
            for user in 0..<18 { others.append(try await live.request(.GET, "/v1/users/u\(user)/activities/1/streams").status) }
            let spent = try await live.request(.GET, "/v1/users/late/activities/1/streams")
            let stats = try await UpstreamProtectionTests.domainStats(live, "activities")
            await live.stop()

            let refused = burst.filter { $0.status == 429 }
            let fetched = burst.filter { $0.status == 200 }
            #expect(fetched.count == 2)
            #expect(refused.count == 28)
            #expect(refused.allSatisfy {
                $0.header("Content-Type") == "application/problem+json"
                    && $0.body.contains("https://unicache.dev/problems/user-budget-spent")
                    && $0.header("Retry-After").flatMap(Int.init).map { (1...60).contains($0) } == true
                    && $0.header("Cache-Status") == "unicache; detail=user-budget"
            })
            #expect(others == Array(repeating: 200, count: 18))
            #expect(spent.status == 503 && spent.body.contains("upstream-budget-spent"))
            #expect(live.upstream.requestTargets.count == 20)
            let rejected = try #require(stats["rejected"] as? [String: Int])
            #expect(rejected["user"] == 28 && rejected["rate"] == 1)
        }
    }

    /// `--upstream-concurrency activities=10` at 10 %: one of a user's fetches in flight at a time; their others wait
    /// for it, another user's is fetched meanwhile.
    @Test func oneUsersFetchesInFlightWaitForTheirOwnWhileOthersGoAhead() async throws {
        let gateClock = ManualClock()
        let cap = [UpstreamDomain.activities: UpstreamProtection(concurrency: 10)]
        try await withService(LiveService.start(protection: cap, gateClock: gateClock)) { live in
            let latch = Latch()
            for id in 0..<3 { live.upstream.set("/users/mallory/activities/\(id)/streams", .gated(latch, .json(#"{"s":1}"#))) }
            let burst = Task {
                try await withThrowingTaskGroup(of: Int.self) { group in
                    for id in 0..<3 { group.addTask { try await live.request(.GET, "/v1/users/mallory/activities/\(id)/streams").status } }
                    return try await group.reduce(into: []) { $0.append($1) }
                }
            }
            // One of mallory's fetches at the upstream, two waiting for it (each wait parks its deadline, the request
            // deadline of 30 s, on the clock; the service's once-a-second memory reclaimer sleeps on it too).
            let mallorysAtUpstream = { (0..<3).map { live.upstream.requestCount("/users/mallory/activities/\($0)/streams") }.reduce(0, +) }
            await waitUntil("mallory's other fetches wait") { gateClock.sleepers(beyond: .seconds(5)) == 2 && mallorysAtUpstream() == 1 }
            let victim = try await live.request(.GET, "/v1/users/victim/activities/9/streams")
            let inFlight = try await UpstreamProtectionTests.domainStats(live, "activities")["inFlight"] as? Int
            let mallorysBeforeOpening = mallorysAtUpstream()
            latch.open()
            let statuses = try await burst.value
            await live.stop()

            #expect(mallorysBeforeOpening == 1)
            #expect(victim.status == 200 && victim.header("X-Cache") == "MISS")
            #expect(inFlight == 1)
            #expect(statuses == [200, 200, 200])
        }
    }

    /// `--refresh-interval 30s`: a forced refresh within 30 s of the fetch is a hit of the stored copy, counted as a
    /// hit and as `refreshThrottled`; one later fetches.
    @Test func aRefreshWithinTheIntervalIsAHitOfTheStoredCopy() async throws {
        let clock = ManualWallClock(Date())
        try await withService(LiveService.start(refreshInterval: .seconds(30), clock: clock)) { live in
            let miss = try await live.request(.GET, "/v1/users/a/subscription")
            clock.advance(by: 10)
            let throttled = try await live.request(.GET, "/v1/users/a/subscription", headers: [("Cache-Control", "no-cache")])
            clock.advance(by: 21)
            let refreshed = try await live.request(.GET, "/v1/users/a/subscription?refresh=true")
            let stats = try await live.request(.GET, "/stats")
            let domain = try await UpstreamProtectionTests.domainStats(live, "subscription")
            let metrics = try await live.request(.GET, "/metrics")
            await live.stop()

            #expect(miss.header("X-Cache") == "MISS")
            #expect(throttled.status == 200 && throttled.header("X-Cache") == "HIT")
            #expect(throttled.header("Cache-Status") == "unicache; hit; detail=refresh-throttled")
            #expect(throttled.header("Age") == "10" && throttled.body == miss.body)
            #expect(refreshed.header("X-Cache") == "REFRESH")
            #expect(live.upstream.requestCount("/users/a/subscription") == 2)
            #expect(domain["refreshThrottled"] as? Int == 1)
            #expect(stats.body.contains(#""hits":1"#) && stats.body.contains(#""refreshes":1"#))
            #expect(metrics.body.contains(#"unicache_upstream_refresh_throttled_total{domain="subscription"} 1"#))
        }
    }
}
