import Foundation
import Redis
import RedisTestSupport
import TestSupport
import Testing
import UnifiedCache

@testable import RedisTier

/// The erasure script's second step (CONTRACT §13: every key a script touches named in `KEYS`): a key the user's index
/// gained after the caller read it is not deleted blind, but returned for another round, and the change is announced
/// only once nothing is left.
@Suite(.timeLimit(.minutes(1))) struct ErasureScriptTests {
    @Test func aKeyIndexedSinceTheReadIsLeftForAnotherRoundAndAnnouncedOnce() async throws {
        let redis = try await RedisServerProcess.start()
        let prefix = "er\(UInt32.random(in: 0...UInt32.max)):"
        let instance = TierInstance(redis, prefix: prefix)
        let (tier, keys) = (instance.tier, instance.tier.keys)
        for key in ["ns:a", "ns:b"] {
            try await tier.store(IdentityRoundTripTests.entry(key, namespace: "ns", user: "u"))
        }
        let index = keys.userIndex("u", shard: 0)
        func erase(_ named: [String]) async throws -> RedisReply {
            try await tier.commands.run(
                "invalidate", RedisScripts.deleteUser.on(keys), keys: [index, keys.log(0)] + named.map(keys.entry),
                arguments: [keys.shardPrefix(0), keys.channel(0), tier.messageHead, "user|u", "1000", "all"])
        }
        let logBefore = try await redisCommand(redis, "XLEN", keys.log(0))
        let first = try await erase(["ns:a"])
        let logBetween = try await redisCommand(redis, "XLEN", keys.log(0))
        let second = try await erase(["ns:b"])
        let logAfter = try await redisCommand(redis, "XLEN", keys.log(0))
        let left = try await redisCommand(redis, "EXISTS", keys.entry("ns:a"), keys.entry("ns:b"), index)
        await redis.stop()

        #expect(first == .array([.array([.string(Array("ns:a".utf8))]), .array([.string(Array("ns:b".utf8))])]))
        #expect(second == .array([.array([.string(Array("ns:b".utf8))]), .array([])]))
        #expect(logBetween == logBefore)
        #expect(logAfter.int == (logBefore.int ?? 0) + 1)
        #expect(left == .integer(0))
    }
}
