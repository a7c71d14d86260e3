import Foundation
import RedisTestSupport
@testable import Settings
import TestSupport
import Testing
import UnifiedCache
import UpstreamGate
@testable import UnicacheApp

/// CONTRACT §7 through the whole service and a real upstream, on a gate clock moved by hand: a storm under a
/// budget, a 429 pause, the circuit breaker, a refused connection failing at once, and service headers.
@Suite(.serialized, .timeLimit(.minutes(2))) struct UpstreamProtectionTests {
    /// `upstream.domains.{domain}` of `/stats`.
    static func domainStats(_ live: LiveService, _ domain: String) async throws -> [String: Any] {
        let answer = try await live.request(.GET, "/stats")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])
        let upstream = try #require(json["upstream"] as? [String: Any])
        let domains = try #require(upstream["domains"] as? [String: Any])
        return try #require(domains[domain] as? [String: Any])
    }

    /// 1,000 cold requests for distinct keys and forced refreshes of 5 stored ones under `subscription=5/10s`: the
    /// upstream receives exactly the budget, stored copies are served STALE with `detail=rate-limited`, and the
    /// rest are 503 problems with `Retry-After`.
    @Test func aStormUnderABudgetReachesTheUpstreamExactlyTheBudget() async throws {
        let clock = ManualClock()
        let budget = RateWindow(limit: 5, window: .seconds(10))
        try await withService(LiveService.start(protection: [.subscription: UpstreamProtection(budgets: [budget])], gateClock: clock)) { live in
            for user in 0..<5 { #expect(try await live.request(.GET, "/v1/users/stored\(user)/subscription").status == 200) }
            #expect(try await live.request(.GET, "/v1/users/cold/subscription").status == 503)
            clock.advance(by: .seconds(10))

            let answers = try await withThrowingTaskGroup(of: LiveService.Answer.self) { group in
                for user in 0..<1000 { group.addTask { try await live.request(.GET, "/v1/users/storm\(user)/subscription") } }
                for user in 0..<5 {
                    group.addTask { try await live.request(.GET, "/v1/users/stored\(user)/subscription?refresh=true") }
                }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let stats = try await Self.domainStats(live, "subscription")
            await live.stop()
            let reached = live.upstream.requestTargets.count
            #expect(reached == 10)
            let fetched = answers.filter { $0.status == 200 && ["MISS", "REFRESH"].contains($0.header("X-Cache") ?? "") }
            let stale = answers.filter { $0.header("X-Cache") == "STALE" }
            let refused = answers.filter { $0.status == 503 }
            #expect(fetched.count == 5)
            #expect(stale.count + fetched.count + refused.count == 1005)
            #expect(stale.allSatisfy { $0.header("Cache-Status") == "unicache; hit; fwd=stale; detail=rate-limited" })
            #expect(stale.count == 5 - answers.filter { $0.header("X-Cache") == "REFRESH" }.count)
            #expect(refused.allSatisfy {
                $0.header("Content-Type") == "application/problem+json"
                    && $0.header("Retry-After").flatMap(Int.init).map { (1...10).contains($0) } == true
            })
            #expect(stats["budgetRemaining"] as? Int == 0)
            let rejected = try #require(stats["rejected"] as? [String: Int])
            #expect(rejected["rate"] == 1 + 1005 - 5)
        }
    }

    /// Warming the seven weekday averages is background work: under `health=7/1m` it may spend 6 (the last tenth,
    /// rounded up, is kept for requests), and a request still gets the seventh.
    @Test func warmingNeverSpendsTheLastTenthOfTheBudget() async throws {
        let budget = RateWindow(limit: 7, window: .seconds(60))
        try await withService(LiveService.start(protection: [.health: UpstreamProtection(budgets: [budget])], gateClock: ManualClock())) { live in
            let warm = try await live.request(.POST, "/v1/users/a/health/averages/warm", admin: true)
            let fetchedByWarm = live.upstream.requestTargets.count
            let request = try await live.request(.GET, "/v1/users/a/health/today")
            let stats = try await Self.domainStats(live, "health")
            await live.stop()
            #expect(warm.status == 503 && warm.header("Retry-After") != nil)
            #expect(fetchedByWarm == 6)
            #expect(request.status == 200 && live.upstream.requestTargets.count == 7)
            #expect(stats["budgetRemaining"] as? Int == 0)
        }
    }

    @Test func a429PausesTheDomainForItsRetryAfter() async throws {
        let clock = ManualClock()
        try await withService(LiveService.start(gateClock: clock)) { live in
            live.upstream.reply("/users/a/subscription", .rateLimited(retryAfter: "3"))
            let limited = try await live.request(.GET, "/v1/users/a/subscription")
            let paused = try await live.request(.GET, "/v1/users/b/subscription")
            clock.advance(by: .milliseconds(2999))
            let stillPaused = try await live.request(.GET, "/v1/users/b/subscription")
            clock.advance(by: .milliseconds(1))
            let resumed = try await live.request(.GET, "/v1/users/b/subscription")
            let stats = try await Self.domainStats(live, "subscription")
            await live.stop()
            #expect(limited.status == 503 && limited.header("Retry-After") == "3")
            #expect(paused.status == 503 && paused.header("Retry-After") == "3")
            #expect(stillPaused.status == 503 && stillPaused.header("Retry-After") == "1")
            #expect(resumed.status == 200)
            #expect(live.upstream.requestCount("/users/b/subscription") == 1)
            #expect((stats["rejected"] as? [String: Int])?["paused"] == 2)
        }
    }

    /// The request that met the 429 is told the pause the domain keeps, as the requests after it are: an hour at most
    /// (not the upstream's ten), 60 s when the upstream named none or something that is no time.
    @Test(arguments: [("36000", "3600"), (nil, "60"), ("soon", "60")])
    func the429sOwnRequestIsToldThePauseKept(retryAfter: String?, told: String) async throws {
        let clock = ManualClock()
        try await withService(LiveService.start(gateClock: clock)) { live in
            live.upstream.reply("/users/a/subscription", .rateLimited(retryAfter: retryAfter))
            let limited = try await live.request(.GET, "/v1/users/a/subscription")
            let paused = try await live.request(.GET, "/v1/users/b/subscription")
            await live.stop()
            #expect(limited.status == 503 && limited.header("Retry-After") == told)
            #expect(paused.status == 503 && paused.header("Retry-After") == told)
        }
    }

    @Test func fiveFailuresOpenTheCircuitAndAProbeClosesIt() async throws {
        let clock = ManualClock()
        try await withService(LiveService.start(gateClock: clock)) { live in
            live.upstream.reply("/users/a/subscription", .serverError)
            for _ in 0..<5 { #expect(try await live.request(.GET, "/v1/users/a/subscription").status == 502) }
            // Open: answered without contacting the upstream, for this key and any other of the domain.
            let open = try await live.request(.GET, "/v1/users/b/subscription")
            let openStats = try await Self.domainStats(live, "subscription")
            // The back-off (1 s, up to a fifth more): then one probe, whose success closes the circuit.
            clock.advance(by: .milliseconds(1200))
            let probe = try await live.request(.GET, "/v1/users/b/subscription")
            let closedStats = try await Self.domainStats(live, "subscription")
            let metrics = try await live.request(.GET, "/metrics")
            await live.stop()
            #expect(open.status == 502 && open.body.contains("circuit is open"))
            #expect(openStats["circuit"] as? String == "open")
            #expect(live.upstream.requestCount("/users/a/subscription") == 5)
            #expect(probe.status == 200 && live.upstream.requestCount("/users/b/subscription") == 1)
            #expect(closedStats["circuit"] as? String == "closed")
            #expect((closedStats["rejected"] as? [String: Int])?["circuit"] == 1)
            #expect(metrics.body.contains(#"unicache_upstream_rejected_total{domain="subscription",reason="circuit"} 1"#))
            #expect(metrics.body.contains(#"unicache_upstream_circuit_open{domain="subscription"} 0"#))
        }
    }

    /// An upstream that refuses the connection: the fetch fails at once, not when the 20 s upstream timeout
    /// runs out (async-http-client retried the connection until then), and counts as a failure, not a fetch.
    @Test func aRefusedConnectionFailsAtOnce() async throws {
        let reserved = try ReservedPort()
        defer { reserved.release() }
        try await withService(LiveService.start(upstreamTimeout: .seconds(20), upstream: (TestUpstream(), reserved.port))) { live in
            let clock = ContinuousClock()
            let start = clock.now
            let answer = try await live.request(.GET, "/v1/users/a/subscription")
            let took = clock.now - start
            let stats = try await live.request(.GET, "/stats")
            await live.stop()
            #expect(answer.status == 502)
            #expect(took < .seconds(10))
            // No request reached the upstream: a failure, not a fetch.
            #expect(stats.body.contains(#""failures":1"#) && stats.body.contains(#""fetches":0"#))
        }
    }

    /// 80 concurrent cold fetches under `--upstream-concurrency subscription=80` are all in flight at the upstream
    /// at once: the HTTP client's pool does not queue them behind a few connections (it opened 8 per host before).
    @Test func theCapNotThePoolDecidesHowManyFetchesAreInFlight() async throws {
        try await withService(LiveService.start(protection: [.subscription: UpstreamProtection(concurrency: 80)])) { live in
            let latch = Latch()
            for user in 0..<80 { live.upstream.set("/users/u\(user)/subscription", .gated(latch, .json(#"{"ok":true}"#))) }
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for user in 0..<80 { group.addTask { try await live.request(.GET, "/v1/users/u\(user)/subscription").status } }
                for user in 0..<80 { await live.upstream.waitForRequests("/users/u\(user)/subscription", count: 1) }
                let inFlight = try await Self.domainStats(live, "subscription")["inFlight"] as? Int
                #expect(inFlight == 80)
                latch.open()
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let stats = try await live.request(.GET, "/stats")
            await live.stop()
            #expect(statuses == Array(repeating: 200, count: 80))
            #expect(stats.body.contains(#""fetches":80"#))
        }
    }

    /// A fetch over the cap waits for a slot until the request's deadline (`--request-timeout`), not the upstream
    /// timeout: past 5 s of waiting (the upstream timeout here) it still waits, and is fetched once the slot frees.
    /// It gave up at the upstream timeout with 502 "the upstream failed (timeout)", though the upstream had not.
    @Test func aFetchOverTheCapWaitsForASlotUntilTheRequestsDeadline() async throws {
        let gateClock = ManualClock()
        let cap = [UpstreamDomain.subscription: UpstreamProtection(concurrency: 1)]
        try await withService(
            LiveService.start(
                requestTimeout: .seconds(30), upstreamTimeout: .seconds(5), protection: cap, gateClock: gateClock)
        ) { live in
            let latch = Latch()
            live.upstream.set("/users/first/subscription", .gated(latch, .json(#"{"ok":1}"#)))
            let first = Task { try await live.request(.GET, "/v1/users/first/subscription").status }
            await live.upstream.waitForRequests("/users/first/subscription", count: 1)
            let second = Task { try await live.request(.GET, "/v1/users/second/subscription").status }
            // The second fetch's wait parks its deadline on the gate's clock (the once-a-second reclaimer sleeps on it
            // too, within 2 s).
            await waitUntil("the second fetch waits for the slot") { gateClock.sleepers(beyond: .seconds(2)) == 1 }
            gateClock.advance(by: .seconds(10))
            let stillWaiting = gateClock.sleepers(beyond: .seconds(2))
            latch.open()
            let statuses = [try await first.value, try await second.value]
            let fetched = live.upstream.requestCount("/users/second/subscription")
            await live.stop()
            #expect(stillWaiting == 1)
            #expect(statuses == [200, 200])
            #expect(fetched == 1)
        }
    }

    @Test func serviceHeadersReachTheUpstreamOfTheirDomainOnly() async throws {
        let protection = [
            UpstreamDomain.activities: UpstreamProtection(headers: [UpstreamHeader(name: "Authorization", value: "Bearer s3cret")])
        ]
        try await withService(LiveService.start(protection: protection)) { live in
            #expect(try await live.request(.GET, "/v1/users/a/activities").status == 200)
            #expect(try await live.request(.GET, "/v1/users/a/subscription").status == 200)
            let stats = try await live.request(.GET, "/stats")
            await live.stop()
            #expect(live.upstream.lastHeaders("/users/a/activities")?["Authorization"] == ["Bearer s3cret"])
            #expect(live.upstream.lastHeaders("/users/a/subscription")?["Authorization"] == [])
            #expect(!stats.body.contains("s3cret"))
        }
    }
}
