import Clocks
import Foundation
import JSONLogging
import Logging
import Redis
import RedisTestSupport
import Settings
import TestSupport
import Testing
import UnifiedCache
import UpstreamGate

import UnicacheApp

/// CONTRACT §6 with a real Redis and several real instances: shared hits, fleet-wide coalescing and
/// invalidation, verification of what Redis holds, and Redis dying, stalling and coming back empty.
@Suite(.serialized, .timeLimit(.minutes(3))) struct FleetTests {
    /// §6.1: what one instance fetched, another (started later, empty) serves as a shared hit, with the age of
    /// the original fetch.
    @Test func aNewInstanceServesWhatTheFleetStored() async throws {
        try await withService(Fleet.start(instances: 1)) { fleet in
            let first = try await fleet.instances[0].request(.GET, "/v1/users/alice/subscription")
            #expect(first.header("X-Cache") == "MISS")
            try await withService(fleet.startInstance()) { restarted in
                let answer = try await restarted.request(.GET, "/v1/users/alice/subscription")
                let again = try await restarted.request(.GET, "/v1/users/alice/subscription")
                await restarted.stop()
                await fleet.stop()
                #expect(answer.status == 200)
                #expect(answer.body == first.body)
                #expect(answer.header("X-Cache") == "HIT")
                #expect(answer.header("X-Cache-Tier") == "shared")
                #expect(answer.header("Cache-Status") == "unicache; hit; detail=shared")
                #expect(answer.header("ETag") == first.header("ETag"))
                #expect(again.header("X-Cache-Tier") == "memory")
                #expect(fleet.upstream.requestCount("/users/alice/subscription") == 1)
                #expect(Fleet.shared(restarted).hits == 1)
            }
        }
    }

    /// §6.3: 300 concurrent cold requests spread over 3 instances make one upstream request.
    @Test func aStampedeOverThreeInstancesMakesOneUpstreamRequest() async throws {
        try await withService(Fleet.start(instances: 3)) { fleet in
            let answers = try await Fleet.stampede(300, on: fleet.instances, upstream: fleet.upstream)
            await fleet.stop()
            #expect(fleet.upstream.requestCount("/users/crowd/subscription") == 1)
            #expect(answers.allSatisfy { $0.status == 200 && $0.body == #"{"plan":"pro"}"# })
            #expect(answers.filter { $0.header("X-Cache") == "MISS" }.count == 1)
            #expect(answers.filter { $0.header("X-Cache") == "COALESCED" }.count == 299)
        }
    }

    /// §6.4: every kind of invalidation on one instance reaches the others' local tiers.
    @Test func everyInvalidationOnOneInstanceReachesTheOthers() async throws {
        // Not inside withService: in its closure (Swift 6.3.1, debug) the "prefix" step's `change` ran another step's
        // closure (the answer was the first PUT's 201), so B rightly kept its copy: non-escaping closures handed to
        // local functions declared inside a closure body were mixed up. Outside a closure they are not. Stopped on
        // every path.
        let fleet = try await Fleet.start(instances: 2)
        do {
            let (a, b) = (fleet.instances[0], fleet.instances[1])
            func received() -> Int { Fleet.shared(b).invalidationsReceived }
            func expectDropped(_ what: String, _ change: () async throws -> LiveService.Answer, check: String) async throws {
                let before = received()
                let answer = try await change()
                #expect(answer.status < 300, "\(what): \(answer.status) \(answer.body)")
                await waitUntil("\(what) reaches B") { received() > before }
                let after = try await b.request(.GET, check)
                #expect(after.header("X-Cache") != "HIT" || after.header("X-Cache-Tier") == "shared", "\(what)")
            }
            // Each change on A is announced to B; a test step waits for its announcement before the next, so that a
            // late message of an earlier step is never taken for the one awaited.
            func announced(_ what: String, after change: () async throws -> LiveService.Answer) async throws -> LiveService.Answer {
                let before = received()
                let answer = try await change()
                await waitUntil("\(what) reaches B") { received() > before }
                return answer
            }
            // Raw values: B holds v1 in memory; a PUT of v2 on A replaces it everywhere.
            _ = try await announced("PUT v1") { try await a.request(.PUT, "/v1/cache/k1", body: "v1", admin: true) }
            #expect(try await b.request(.GET, "/v1/cache/k1", admin: true).body == "v1")
            #expect(try await announced("PUT v2") { try await a.request(.PUT, "/v1/cache/k1", body: "v2", admin: true) }.status == 200)
            #expect(try await b.request(.GET, "/v1/cache/k1", admin: true).body == "v2")
            #expect(try await announced("DELETE") { try await a.request(.DELETE, "/v1/cache/k1", admin: true) }.status == 204)
            #expect(try await b.request(.GET, "/v1/cache/k1", admin: true).status == 404)

            // Read-through entries cached by both instances (A's fill is announced too: B reads after it).
            for path in ["/v1/users/u1/subscription", "/v1/users/u2/subscription", "/v1/users/u3/profile"] {
                _ = try await announced("the fill of \(path)") { try await a.request(.GET, path) }
                _ = try await b.request(.GET, path)
                #expect(try await b.request(.GET, path).header("X-Cache-Tier") == "memory")
            }
            try await expectDropped(
                "event", { try await a.request(.POST, "/v1/users/u1/events", body: #"{"type":"subscription.updated"}"#, admin: true) },
                check: "/v1/users/u1/subscription")
            try await expectDropped("erasure", { try await a.request(.DELETE, "/v1/users/u2", admin: true) }, check: "/v1/users/u2/subscription")
            try await expectDropped(
                "prefix", { try await a.request(.DELETE, "/v1/cache?prefix=profile:", admin: true) }, check: "/v1/users/u3/profile")
            _ = try await b.request(.GET, "/v1/users/u1/subscription")
            try await expectDropped("all", { try await a.request(.DELETE, "/v1/cache?all=true", admin: true) }, check: "/v1/users/u1/subscription")
            // A refresh on A replaces B's copy too.
            _ = try await b.request(.GET, "/v1/users/u9/subscription")
            fleet.upstream.reply("/users/u9/subscription", .json(#"{"plan":"new"}"#))
            let beforeRefresh = received()
            #expect(try await a.request(.GET, "/v1/users/u9/subscription?refresh=true").header("X-Cache") == "REFRESH")
            await waitUntil("the refresh reaches B") { received() > beforeRefresh }
            #expect(try await b.request(.GET, "/v1/users/u9/subscription").body == #"{"plan":"new"}"#)
            await fleet.stop()
        } catch {
            await fleet.stop()
            throw error
        }
        await fleet.stop()
    }

    /// §6.2: a value in Redis that does not verify is deleted, counted and never served.
    @Test func aCorruptedValueInRedisIsNeverServed() async throws {
        try await withService(Fleet.start(instances: 2)) { fleet in
            let (a, b) = (fleet.instances[0], fleet.instances[1])
            #expect(try await a.request(.PUT, "/v1/cache/c1", body: "genuine", admin: true).status == 201)
            _ = try await redisCommand(fleet.redis, "SET", fleet.prefix + "c1", "not an entry")
            let answer = try await b.request(.GET, "/v1/cache/c1", admin: true)
            let left = try await redisCommand(fleet.redis, "EXISTS", fleet.prefix + "c1")
            let corrupt = Fleet.shared(b).corrupt
            await fleet.stop()
            #expect(answer.status == 404)
            #expect(left == .integer(0))
            #expect(corrupt == 1)
        }
    }

    /// §6.5 and §6.6: Redis killed under traffic: reads keep answering, fleet-wide writes are 503 with
    /// Retry-After (the local part applied, nothing stored); Redis back empty: the instances reconnect by
    /// themselves, find the gap and clear their memory tiers.
    @Test func redisDyingAndComingBackEmpty() async throws {
        try await withService(Fleet.start(instances: 2)) { fleet in
            let (a, b) = (fleet.instances[0], fleet.instances[1])
            for user in 0..<20 { _ = try await a.request(.GET, "/v1/users/r\(user)/subscription") }
            await fleet.redis.kill()
            let reads = try await withThrowingTaskGroup(of: Int.self) { group in
                for user in 0..<40 { group.addTask { try await b.request(.GET, "/v1/users/r\(user)/subscription").status } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            #expect(reads.allSatisfy { $0 == 200 })
            let put = try await a.request(.PUT, "/v1/cache/during", body: "x", admin: true)
            #expect(put.status == 503)
            #expect(put.header("Retry-After").flatMap(Int.init) != nil)
            #expect(put.header("Content-Type") == "application/problem+json")
            #expect(try await a.request(.GET, "/v1/cache/during", admin: true).status == 404)
            let erase = try await a.request(.DELETE, "/v1/users/r1", admin: true)
            #expect(erase.status == 503)
            #expect(try await a.request(.GET, "/v1/users/r1/subscription").header("X-Cache") == "MISS")
            let ready = try await a.request(.GET, "/readyz")
            #expect(ready.status == 200)
            #expect(ready.body.contains(#""sharedTier":"unreachable""#))
            #expect(a.app.cache.statistics().memory.entries > 0)

            try await fleet.redis.restart()
            for instance in [a, b] { await fleet.waitUntilConnected(instance) }
            #expect(a.app.cache.statistics().memory.entries == 0)
            #expect(b.app.cache.statistics().memory.entries == 0)
            #expect(try await a.request(.PUT, "/v1/cache/after", body: "y", admin: true).status == 201)
            #expect(try await b.request(.GET, "/v1/cache/after", admin: true).body == "y")
            #expect(try await a.request(.GET, "/readyz").body.contains(#""sharedTier":"connected""#))
            await fleet.stop()
        }
    }

    /// §6.5: a Redis that stops answering (`DEBUG SLEEP`) bounds each request by the timeout.
    @Test func aStalledRedisCostsAtMostItsTimeout() async throws {
        // 1 s: the instance's start-up commands, before Redis sleeps, must not time out on a loaded machine. The
        // timeout is still far below the 30 s Redis sleeps, which a request waiting for Redis would take.
        try await withService(Fleet.start(instances: 1, timeout: .seconds(1))) { fleet in
            let a = fleet.instances[0]
            let sleeper = Task { try? await redisCommand(fleet.redis, "DEBUG", "SLEEP", "30", timeout: .seconds(2)) }
            await waitUntil("Redis is asleep", within: .seconds(20)) {
                // A PING unanswered for a second: asleep (a loaded machine does not hold an awake Redis's PONG that long).
                let probe = RedisNodeClient(endpoint: fleet.redis.endpoint, timeout: .seconds(1), clock: ContinuousClock(), size: 1)
                defer { probe.shutdown() }
                return (try? await probe.send(.ping)) == nil
            }
            let started = ContinuousClock.now
            let answers = try await withThrowingTaskGroup(of: LiveService.Answer.self) { group in
                for user in 0..<10 { group.addTask { try await a.request(.GET, "/v1/users/s\(user)/subscription") } }
                return try await group.reduce(into: []) { $0.append($1) }
            }
            let elapsed = ContinuousClock.now - started
            _ = await sleeper.value
            await fleet.stop()
            #expect(answers.allSatisfy { $0.status == 200 })
            // Far below the 30 s Redis sleeps: each command gave up at its timeout (a bound of the design, not a
            // performance figure; generous for a loaded machine under ThreadSanitizer).
            #expect(elapsed < .seconds(20))
        }
    }

    /// §6.7: the password is in no log line, no /stats and no error.
    @Test func thePasswordIsShownNowhere() async throws {
        let collector = LineCollector()
        let logger = Logger(label: "fleet") { label in
            JSONLogHandler(label: label, level: .debug, output: collector.output, metadataProvider: nil, clock: SystemWallClock())
        }
        try await withService(Fleet.start(instances: 1, password: "s3cret-pw", logger: logger)) { fleet in
            let a = fleet.instances[0]
            _ = try await a.request(.GET, "/v1/users/p/subscription")
            let stats = try await a.request(.GET, "/stats")
            let metrics = try await a.request(.GET, "/metrics")
            await fleet.redis.kill()
            _ = try await a.request(.PUT, "/v1/cache/p", body: "x", admin: true)
            await fleet.stop()
            #expect(stats.body.contains(#""shared":{"#))
            #expect(metrics.body.contains("unicache_shared_connected"))
            for text in collector.lines + [stats.body, metrics.body] { #expect(!text.contains("s3cret-pw")) }
        }
    }

    /// §6.3 with §7: an `--upstream-rate` budget counts the fleet's requests: 20 cold requests over 2 instances
    /// under `subscription=5/1m` reach the upstream 5 times.
    @Test func aBudgetCountsTheWholeFleet() async throws {
        let budget = RateWindow(limit: 5, window: .seconds(60))
        try await withService(Fleet.start(instances: 2, protection: [.subscription: UpstreamProtection(budgets: [budget])])) { fleet in
            var statuses: [Int] = []
            for user in 0..<20 {
                statuses.append(try await fleet.instances[user % 2].request(.GET, "/v1/users/b\(user)/subscription").status)
            }
            let stats = try await fleet.instances[1].request(.GET, "/stats")
            await fleet.stop()
            #expect(fleet.upstream.requestTargets.count == 5)
            #expect(statuses.filter { $0 == 200 }.count == 5)
            #expect(statuses.filter { $0 == 503 }.count == 15)
            #expect(stats.body.contains(#""budgetRemaining":0"#))
        }
    }

    /// §6.3 with Redis gone: each instance falls back to the budget divided by the fleet size it last saw, so the
    /// fleet together still stays inside it.
    @Test func withoutRedisEachInstanceSpendsItsShareOfTheBudget() async throws {
        let budget = RateWindow(limit: 6, window: .seconds(60))
        try await withService(Fleet.start(instances: 2, protection: [.subscription: UpstreamProtection(budgets: [budget])])) { fleet in
            for instance in fleet.instances {
                await waitUntil("the fleet size is known") { Fleet.shared(instance).instances == 2 }
            }
            await fleet.redis.kill()
            var statuses: [Int] = []
            for user in 0..<20 {
                statuses.append(try await fleet.instances[user % 2].request(.GET, "/v1/users/f\(user)/subscription").status)
            }
            await fleet.stop()
            #expect(fleet.upstream.requestTargets.count == 6)
            #expect(statuses.filter { $0 == 200 }.count == 6)
        }
    }


    /// §6.5: an instance starts with its Redis unreachable and serves: reads from the upstream, fleet-wide writes
    /// 503, /readyz 200 naming the shared tier as unreachable.
    @Test func anInstanceStartsAndServesWithRedisUnreachable() async throws {
        let reserved = try ReservedPort()
        defer { reserved.release() }
        try await withService(LiveService.start(
            upstreamTimeout: .seconds(5),
            redis: Fleet.tierConfiguration(
                RedisEndpoint(host: "127.0.0.1", port: reserved.port), timeout: .seconds(1), prefix: "u:"))) { live in
            let read = try await live.request(.GET, "/v1/users/alone/subscription")
            let again = try await live.request(.GET, "/v1/users/alone/subscription")
            let put = try await live.request(.PUT, "/v1/cache/k", body: "v", admin: true)
            let ready = try await live.request(.GET, "/readyz")
            let shared = Fleet.shared(live)
            await live.stop()
            #expect(read.status == 200 && read.header("X-Cache") == "MISS")
            #expect(again.header("X-Cache") == "HIT" && again.header("X-Cache-Tier") == "memory")
            #expect(put.status == 503 && put.header("Retry-After") != nil)
            #expect(ready.status == 200 && ready.body.contains(#""sharedTier":"unreachable""#))
            #expect(!shared.connected && shared.errors > 0)
        }
    }
}
