import Foundation
import Redis
import RedisTestSupport
import Settings
import TestSupport
import Testing
import UnifiedCache

import UnicacheApp

/// CONTRACT §14.3 across a fleet: a raw entry stored under a key naming a user before such puts were refused has no
/// user in Redis (no user index finds it); erasing the user on another instance removes it from Redis and from the
/// instance that holds it in memory, and leaves other users' keys alone, by one announcement to the fleet.
@Suite(.serialized, .timeLimit(.minutes(2))) struct FleetErasureTests {
    /// `a@b`: a user id with a byte beyond the letters, in the shared tier's `SCAN` pattern and in the keys it finds.
    @Test(arguments: ["carol", "a@b"])
    func erasureFindsRawEntriesByKeyInRedisAndOnEveryInstance(user: String) async throws {
        try await withService(Fleet.start(instances: 2)) { fleet in
            let (a, b) = (fleet.instances[0], fleet.instances[1])
            let legacy = ["subscription:\(user)", "health:today:\(user):2026-11-29"]
            let other = "subscription:\(user)yn"
            for key in legacy + [other] {
                _ = try await a.app.cache.put(key: key, body: Array("forged".utf8), ttl: .seconds(600))
            }
            let loggedBefore = try await redisCommand(fleet.redis, "XLEN", fleet.prefix + "#log")
            let erased = try await b.request(.DELETE, "/v1/users/\(user)", admin: true)
            let loggedAfter = try await redisCommand(fleet.redis, "XLEN", fleet.prefix + "#log")
            var left: [RedisReply] = []
            for key in legacy + [other] {
                left.append(try await redisCommand(fleet.redis, "EXISTS", fleet.prefix + key))
            }
            await waitUntil("the erasure reaches A") {
                (try? await a.request(.GET, "/v1/cache/subscription:\(user)", admin: true).status) == 404
            }
            let stillOnA = try await a.request(.GET, "/v1/cache/health:today:\(user):2026-11-29", admin: true).status
            let otherUser = try await a.request(.GET, "/v1/cache/\(other)", admin: true).status
            await fleet.stop()
            #expect(erased.body == #"{"erased":2}"#)
            // One announcement for the fleet: each instance drops the keys naming the user on the user's message (a
            // message per key shape made every instance scan its tiers thirty times over).
            guard case .integer(let before) = loggedBefore, case .integer(let after) = loggedAfter else {
                Issue.record("XLEN: \(loggedBefore), \(loggedAfter)")
                return
            }
            #expect(after - before == 1)
            #expect(left == [.integer(0), .integer(0), .integer(1)])
            #expect(stillOnA == 404)
            #expect(otherUser == 200)
        }
    }
}
