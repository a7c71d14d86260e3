import Clocks
import Foundation
import Logging
import Redis
import RedisTestSupport
import TestSupport
import Testing
import UnifiedCache

@testable import RedisTier

/// A leader's fill lease lives `leaseTime` (the upstream timeout and a second) but its fetch may wait for a slot under
/// the upstream's cap until the request's deadline: while the fetch lasts the lease is renewed every half of its life,
/// so that another instance's follower does not take it over and fetch the same key again. Not once it is another's.
@Suite(.serialized, .timeLimit(.minutes(2))) struct FillLeaseRenewalTests {
    static func milliseconds(_ redis: RedisServerProcess, _ key: String) async throws -> Int {
        guard case .integer(let left) = try await redisCommand(redis, "PTTL", key) else { return -3 }
        return left
    }

    @Test func aHeldLeaseIsRenewedWhileTheFetchLastsAndNeverOnceItIsAnothers() async throws {
        let redis = try await RedisServerProcess.start()
        let ticker = ManualClock()
        let configuration = RedisTierConfiguration(
            endpoint: redis.endpoint, timeout: .seconds(1), prefix: "renew:", leaseTime: .seconds(60))
        let tier = RedisSharedTier(
            configuration: configuration, codec: EntryCodec(), clock: SystemWallClock(), ticker: ticker,
            logger: Logger(label: "lease-renewal-test"))
        let lock = tier.keys.lock("k")
        guard case .leader(let token) = await tier.claimFill("k") else {
            Issue.record("the first claim did not lead")
            return
        }
        let holding = Task { await tier.holdFill("k", token: token) }
        // As if most of the lease's life had gone by while the fetch waited.
        _ = try await redisCommand(redis, "PEXPIRE", lock, "5000")
        await waitUntil("the renewal waits") { ticker.sleepers == 1 }
        ticker.advance(by: .seconds(30))
        try await waitUntil("the lease is renewed") { try await Self.milliseconds(redis, lock) > 5_000 }

        // The lease ran out and another instance leads now: the next renewal leaves it alone, and holding ends.
        _ = try await redisCommand(redis, "SET", lock, "another", "PX", "5000")
        await waitUntil("the renewal waits again") { ticker.sleepers == 1 }
        ticker.advance(by: .seconds(30))
        await holding.value
        let othersLife = try await Self.milliseconds(redis, lock)
        let holder = try await redisCommand(redis, "GET", lock)

        // A fetch that ends cancels the holding.
        guard case .leader(let second) = await tier.claimFill("k2") else {
            Issue.record("the claim of k2 did not lead")
            return
        }
        let cancelled = Task { await tier.holdFill("k2", token: second) }
        await waitUntil("k2's renewal waits") { ticker.sleepers == 1 }
        cancelled.cancel()
        await cancelled.value
        tier.commands.link.shutdown()
        await redis.stop()

        #expect(othersLife <= 5_000)
        #expect(holder == .string(Array("another".utf8)))
    }
}
