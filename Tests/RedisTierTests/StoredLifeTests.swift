import Clocks
import Foundation
import Redis
import RedisTestSupport
import TestSupport
import Testing
import UnifiedCache

@testable import RedisTier

/// A value's life in Redis is counted from the tier's wall clock, not the machine's.
@Suite(.timeLimit(.minutes(2))) struct StoredLifeTests {
    @Test func aStoredValueLivesUntilItsStaleLimitByTheTiersClock() async throws {
        let redis = try await RedisServerProcess.start()
        // Months before the machine's time: counted from the machine's clock, this value would be long stale.
        let now = Date(timeIntervalSince1970: 1_780_000_000)
        let instance = TierInstance(
            endpoint: redis.endpoint, prefix: "life\(UInt32.random(in: 0...UInt32.max)):", clock: ManualWallClock(now))
        let entry = CacheEntry(
            key: "subscription:alice", namespace: "subscription", user: "alice", body: Array("{}".utf8),
            contentType: "application/json", etag: "\"e\"", storedAt: now, expiresAt: now + .seconds(60),
            staleUntil: now + .seconds(600))
        try await instance.tier.store(entry)
        let life = try await redisCommand(redis, "PTTL", instance.tier.keys.entry(entry.key))
        await redis.stop()
        guard case .integer(let milliseconds) = life else {
            Issue.record("PTTL answered \(life)")
            return
        }
        #expect(milliseconds > 500_000 && milliseconds <= 600_000)
    }
}
