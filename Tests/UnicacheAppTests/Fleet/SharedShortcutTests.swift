import Clocks
import Foundation
import HTTPRouting
import Redis
import RedisTestSupport
@testable import Settings
import TestSupport
import Testing
import UnifiedCache

@testable import UnicacheApp

/// Issue 46: a plain request for a target answered earlier in the second reaches Redis from the router's shortcut,
/// before it is parsed or routed; when Redis has nothing, it is routed on as a task that fetches with its own id.
/// One instance on a real redis-server, a memory tier of one entry (a second target moves the first one out) and no
/// disk tier, as `make bench-shared` runs it; its wall clock stands still, so targets stay remembered.
@Suite(.timeLimit(.minutes(3))) struct SharedShortcutTests {
    let alice = "/v1/users/alice/subscription"
    let bob = "/v1/users/bob/subscription"

    func withInstance(_ body: (LiveService, RedisServerProcess, _ prefix: String) async throws -> Void) async throws {
        try await withRedisServer { redis in
            let prefix = "s\(UInt32.random(in: 0...UInt32.max)):"
            try await withService(
                LiveService.start(
                    redis: SharedTierSettings(redis: redis.endpoint, timeout: .seconds(2), prefix: prefix),
                    memory: MemoryTierConfiguration(maxEntries: 1, eviction: .lru), clock: ManualWallClock(Date()))
            ) { live in
                await waitUntil("the shared tier is connected") { live.app.cache.statistics().shared?.connected == true }
                try await body(live, redis, prefix)
            }
        }
    }

    /// The later answer of the shortcut's `.later`; nil (recorded) when it answered now.
    func joined(_ live: LiveService, _ target: String, id: RequestID? = nil) async throws -> Response? {
        let shortcut = try #require(live.app.router.shortcut?(.get, target, HTTPHeaders(), .unknown, id))
        #expect(shortcut.route == "/v1/users/{user}/subscription")
        guard case .later(let later) = shortcut.answer else {
            Issue.record("a read of the shared tier is answered later")
            return nil
        }
        return await later.response()
    }

    @Test func aRememberedTargetIsASharedHitJoinedByTheShortcut() async throws {
        try await withInstance { live, _, _ in
            let first = try await live.request(.GET, alice)
            #expect(first.header("X-Cache") == "MISS")
            #expect(try await live.request(.GET, bob).header("X-Cache") == "MISS")

            let hit = try #require(try await joined(live, alice))
            #expect(hit.headers["X-Cache"] == "HIT" && hit.headers["X-Cache-Tier"] == "shared")
            #expect(hit.headers["ETag"] == first.header("ETag"))
            #expect(String(decoding: hit.body, as: UTF8.self) == first.body)

            // Over HTTP: the server suspends the request and the Redis worker resumes it.
            #expect(try await live.request(.GET, bob).header("X-Cache-Tier") == "shared")
            let again = try await live.request(.GET, alice)
            #expect(again.status == 200 && again.body == first.body)
            #expect(again.header("X-Cache") == "HIT" && again.header("X-Cache-Tier") == "shared")
            #expect(live.upstream.requestCount("/users/alice/subscription") == 1)
            #expect(live.app.cache.statistics().shared?.hits == 3)
        }
    }

    @Test func aTargetRedisNoLongerHoldsIsRoutedOnAndFetchedWithItsOwnRequestID() async throws {
        try await withInstance { live, redis, prefix in
            _ = try await live.request(.GET, alice)
            _ = try await live.request(.GET, bob)
            // Removed behind the instance's back: no invalidation tells it, and the target stays remembered.
            #expect(try await redisCommand(redis, "DEL", prefix + "subscription:alice") == .integer(1))

            let id = try #require(RequestID(validating: "shortcut-fallback-1"))
            let miss = try #require(try await joined(live, alice, id: id))
            #expect(miss.status == 200 && miss.headers["X-Cache"] == "MISS")
            #expect(live.upstream.requestCount("/users/alice/subscription") == 2)
            #expect(live.upstream.lastHeaders("/users/alice/subscription")?["X-Request-ID"] == ["shortcut-fallback-1"])
            #expect(live.app.cache.statistics().shared?.hits == 0)
        }
    }
}
