import Foundation
import Redis
import RedisTestSupport
import TestSupport
import Testing
import UnifiedCache

@testable import RedisTier

/// CONTRACT §14.2 with a real redis-server: user ids and keys with `|`, `@` and `%` travel on the channel, in the
/// fleet's log and in the user index as themselves, never as another; a change this release cannot read drops the
/// local tiers instead of being skipped.
@Suite(.serialized, .timeLimit(.minutes(3))) struct IdentityRoundTripTests {
    static func prefix() -> String { "i\(UInt32.random(in: 0...UInt32.max)):" }

    /// The changes of every kind, with the awkward ids, and the events another instance must apply for them.
    static let scopes: [SharedScope] = [
        .namespaces(["subscription", "progress.today"], user: "auth0|abc"), .user("auth0|abc"), .user("a@b"),
        .key("subscription:auth0|abc"), .prefix("health:today:%7C"), .namespaces([], user: "auth0|abc"),
    ]

    static func entry(_ key: String, namespace: String = "subscription", user: String?) -> CacheEntry {
        let now = Date()
        return CacheEntry(
            key: key, namespace: namespace, user: user, body: Array("{}".utf8), contentType: "application/json",
            etag: "\"e\"", storedAt: now, expiresAt: now + 3600, staleUntil: now + 3600)
    }

    /// Each change made on one instance (invalidations, a fetched value, a raw put) reaches the other as itself.
    @Test func everyKindReachesAnotherInstanceAsItself() async throws {
        let redis = try await RedisServerProcess.start()
        let prefix = Self.prefix()
        let (sender, receiver) = (TierInstance(redis, prefix: prefix), TierInstance(redis, prefix: prefix))
        try await sender.startConnected()
        try await receiver.startConnected()
        for scope in Self.scopes { _ = try await sender.tier.invalidate(scope) }
        try await sender.tier.storeFetched(Self.entry("subscription:auth0|abc", user: "auth0|abc"), releasing: nil)
        try await sender.tier.store(Self.entry("raw:a@b", namespace: "raw", user: nil))
        let expected = Self.scopes.map(SharedTierEvent.invalidate) + [.replaced("subscription:auth0|abc"), .invalidate(.key("raw:a@b"))]
        await waitUntil("every change reaches the receiver") { receiver.statistics.invalidationsReceived >= expected.count }
        await sender.stop()
        await receiver.stop()
        await redis.stop()
        // Its first start dropped its (empty) tiers; then exactly the changes sent.
        #expect(Array(receiver.events.dropFirst()) == expected)
        #expect(receiver.statistics.operations[.init("message", "malformed")] == nil)
    }

    /// A restarted instance reads the same changes back from the fleet's log.
    @Test func theLogCarriesAwkwardIdsToARestartedInstance() async throws {
        let folder = try TemporaryFolder.forCheckpoint()
        defer { folder.remove() }
        let (redis, prefix, file) = try await LogCatchUpTests.afterAFirstRun(in: folder)
        let other = TierInstance(redis, prefix: prefix)
        try await other.startConnected()
        for scope in Self.scopes { _ = try await other.tier.invalidate(scope) }
        try await other.tier.storeFetched(Self.entry("subscription:auth0|abc", user: "auth0|abc"), releasing: nil)

        let restarted = TierInstance(redis, prefix: prefix, checkpointFile: file)
        try await restarted.startConnected()
        await restarted.stop()
        await other.stop()
        await redis.stop()
        #expect(restarted.events == Self.scopes.map(SharedTierEvent.invalidate) + [.replaced("subscription:auth0|abc")])
        #expect(restarted.statistics.replayed == Self.scopes.count + 1 && restarted.statistics.resets == 0)
    }

    /// Erasure and events go through the user's index: `auth0|abc`'s entries only, never user `auth0`'s, and an
    /// event's namespaces reach the script as arguments of their own (no separator a name could contain).
    @Test func theUserIndexRemovesOnlyThatUsersEntries() async throws {
        let redis = try await RedisServerProcess.start()
        let instance = TierInstance(redis, prefix: Self.prefix())
        try await instance.startConnected()
        let tier = instance.tier
        for (key, namespace, user) in [
            ("subscription:auth0|abc", "subscription", "auth0|abc"), ("odd-a:auth0|abc", "a", "auth0|abc"),
            ("odd-b:auth0|abc", "b", "auth0|abc"), ("odd-ab:auth0|abc", "a,b", "auth0|abc"),
            ("subscription:auth0", "subscription", "auth0"), ("subscription:abc", "subscription", "abc"),
        ] {
            try await tier.store(Self.entry(key, namespace: namespace, user: user))
        }
        let event = try await tier.invalidate(.namespaces(["a,b"], user: "auth0|abc"))
        let none = try await tier.invalidate(.namespaces([], user: "auth0|abc"))
        let erased = try await tier.invalidate(.user("auth0|abc"))
        var left: [String] = []
        for key in ["subscription:auth0", "subscription:abc", "subscription:auth0|abc", "odd-a:auth0|abc"] {
            if try await redisCommand(redis, "EXISTS", tier.keys.entry(key)) == .integer(1) { left.append(key) }
        }
        await instance.stop()
        await redis.stop()
        #expect(event == ["odd-ab:auth0|abc"])
        #expect(none.isEmpty)
        #expect(Set(erased) == ["subscription:auth0|abc", "odd-a:auth0|abc", "odd-b:auth0|abc"])
        #expect(left == ["subscription:auth0", "subscription:abc"])
    }

    /// A message in no format this release reads (here the release before's, whose `|` inside a user id was read as
    /// a separator) cannot say what it concerns: the receiver drops its local tiers, counted, and reads nothing into it.
    @Test func anUnreadableMessageDropsTheLocalTiers() async throws {
        let redis = try await RedisServerProcess.start()
        let prefix = Self.prefix()
        let receiver = TierInstance(redis, prefix: prefix)
        try await receiver.startConnected()
        let before = receiver.events.count
        #expect(try await redisCommand(redis, "PUBLISH", prefix + "inval", "old|1-0|ns|auth0|abc|subscription") == .integer(1))
        await waitUntil("the message is handled") { receiver.events.count > before }
        await receiver.stop()
        await redis.stop()
        #expect(Array(receiver.events.dropFirst(before)) == [.reset])
        #expect(receiver.statistics.resets == 1)
        #expect(receiver.statistics.operations[.init("message", "malformed")] == 1)
    }

    /// An unreadable entry in the log is a gap the log cannot vouch for: the changes before it are applied, then
    /// the local tiers are dropped; nothing is read into it and nothing after it is skipped silently. In a later
    /// batch than the first (batches of 1) the reset starts from the position those batches reached.
    @Test(arguments: [1, 1_000]) func anUnreadableLogEntryIsAGap(batch: Int) async throws {
        let folder = try TemporaryFolder.forCheckpoint()
        defer { folder.remove() }
        let (redis, prefix, file) = try await LogCatchUpTests.afterAFirstRun(in: folder)
        let other = TierInstance(redis, prefix: prefix)
        try await other.startConnected()
        _ = try await other.tier.invalidate(.key("before"))
        _ = try await redisCommand(redis, "XADD", prefix + "#log", "*", "m", "old|user|auth0|abc")
        _ = try await other.tier.invalidate(.key("after"))

        let restarted = TierInstance(redis, prefix: prefix, checkpointFile: file, catchUpBatch: batch)
        try await restarted.startConnected()
        await restarted.stop()
        await other.stop()
        await redis.stop()
        #expect(restarted.events == [.invalidate(.key("before")), .reset])
        #expect(restarted.statistics.resets == 1)
        #expect(restarted.statistics.operations[.init("log", "malformed")] == 1)
    }
}
