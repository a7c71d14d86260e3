import Foundation
import Redis
import RedisTestSupport
import TestSupport
import Testing
import UnifiedCache
import UpstreamGate

@testable import RedisTier

/// CONTRACT §15.2 with §6.3 on a real redis-server: one user's share of a domain's budget is counted for the whole
/// fleet, in the budget's own script (one round trip per decision), in keys of one hash slot.
@Suite(.serialized, .timeLimit(.minutes(2))) struct FleetUserShareTests {
    /// Two instances of one fleet (one prefix), each with its counter of `subscription=20/1m` at 10 % per user.
    private static func twoCounters(
        _ redis: RedisServerProcess, share: Int = 10
    ) async throws -> (instances: [TierInstance], counters: [FleetRateCounter]) {
        let prefix = "r\(UInt32.random(in: 0...UInt32.max)):"
        let instances = [TierInstance(redis, prefix: prefix), TierInstance(redis, prefix: prefix)]
        for instance in instances { try await instance.startConnected() }
        let counters = instances.map {
            FleetRateCounter(
                domain: "subscription", windows: [RateWindow(limit: 20, window: .seconds(60))],
                commands: $0.tier.commands, membership: $0.tier.membership, userShare: UserShare(percent: share))
        }
        return (instances, counters)
    }

    private static func stop(_ instances: [TierInstance], _ redis: RedisServerProcess) async {
        for instance in instances { await instance.stop() }
        await redis.stop()
    }

    @Test func aUsersShareIsCountedAcrossTheFleetAndOthersGoAhead() async throws {
        let redis = try await RedisServerProcess.start()
        let (instances, counters) = try await Self.twoCounters(redis)
        let first = await counters[0].take(at: .zero, background: false, user: "mallory")
        let second = await counters[1].take(at: .zero, background: false, user: "mallory")
        let third = await counters[0].take(at: .zero, background: false, user: "mallory")
        let fourth = await counters[1].check(at: .zero, background: false, user: "mallory")
        let others = [
            await counters[1].take(at: .zero, background: false, user: "victim"),
            await counters[0].take(at: .zero, background: false, user: "bob"),
        ]
        let background = await counters[1].take(at: .zero, background: true, user: nil)
        let remaining = await counters[0].remaining(at: .zero)
        let rateCalls = instances.map { $0.statistics.operations[.init("rate", "ok"), default: 0] }
        await Self.stop(instances, redis)

        #expect(first == .granted && second == .granted)
        guard case .userShareSpent(let wait) = third, case .userShareSpent = fourth else {
            Issue.record("mallory's third request was \(third), her check \(fourth)")
            return
        }
        #expect(wait > .seconds(55) && wait <= .seconds(60))
        #expect(others == [.granted, .granted] && background == .granted)
        #expect(remaining == 20 - 5)
        // One script call per decision, on each instance (no other round trip for the user's share).
        #expect(rateCalls == [4, 4])
    }

    /// When the fleet together has spent the budget, the refusal is the budget's, for the user past their share too.
    @Test func aBudgetTheFleetSpentIsTheBudgetsRefusal() async throws {
        let redis = try await RedisServerProcess.start()
        let (instances, counters) = try await Self.twoCounters(redis, share: 50)
        var decisions: [RateDecision] = []
        for index in 0..<20 {
            decisions.append(await counters[index % 2].take(at: .zero, background: false, user: "u\(index / 10)"))
        }
        let late = await counters[0].take(at: .zero, background: false, user: "late")
        let spent = await counters[1].take(at: .zero, background: false, user: "u0")
        await Self.stop(instances, redis)
        #expect(decisions.allSatisfy { $0 == .granted })
        guard case .refused = late, case .refused = spent else {
            Issue.record("after the budget was spent: \(late), \(spent)")
            return
        }
    }

    /// The domain's log and a user's log share one hash tag (one slot, for Redis Cluster), and the user's log
    /// expires with the budget's longest window.
    @Test func theBudgetsKeysAreInOneHashSlot() async throws {
        let redis = try await RedisServerProcess.start()
        let (instances, counters) = try await Self.twoCounters(redis)
        _ = await counters[0].take(at: .zero, background: false, user: "auth0|abc")
        let keys = instances[0].tier.keys
        let domainKey = keys.rate("subscription")
        let userKey = keys.userRate("subscription", user: "auth0|abc")
        let userTTL = try await redisCommand(redis, "PTTL", userKey)
        let domainCount = try await redisCommand(redis, "ZCARD", domainKey)
        await Self.stop(instances, redis)
        #expect(Self.hashTag(domainKey) == "subscription" && Self.hashTag(userKey) == "subscription")
        #expect(domainCount == .integer(1))
        guard case .integer(let ttl) = userTTL else {
            Issue.record("PTTL answered \(userTTL)")
            return
        }
        #expect(ttl > 0 && ttl <= 60_000)
    }

    /// Redis Cluster's hash tag: the text between the first `{` and the next `}`, when not empty.
    static func hashTag(_ key: String) -> String? {
        guard let open = key.firstIndex(of: "{"),
            let close = key[key.index(after: open)...].firstIndex(of: "}"), close > key.index(after: open)
        else { return nil }
        return String(key[key.index(after: open)..<close])
    }
}
