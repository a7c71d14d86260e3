import ClocksTesting
import Foundation
import Redis
import RedisTestSupport
import TestSupport
import Testing
import UnifiedCache

@testable import RedisTier

/// CONTRACT §6.6 with a real redis-server: the fleet's invalidation log, an instance catching up from the position
/// it saved, and the resets when the log cannot vouch for what was missed.
@Suite(.serialized, .timeLimit(.minutes(3))) struct LogCatchUpTests {
    static func prefix() -> String { "l\(UInt32.random(in: 0...UInt32.max)):" }

    /// A fresh redis-server, a fleet prefix, and a checkpoint file in `folder` that a first instance has left behind
    /// (it ran until in step, then stopped).
    static func afterAFirstRun(
        in folder: TemporaryFolder, logLength: Int = 100_000
    ) async throws -> (RedisServerProcess, prefix: String, file: String) {
        let redis = try await RedisServerProcess.start()
        let (prefix, file) = (Self.prefix(), folder.checkpointFile)
        _ = try await TierInstance.ranOnce(redis, prefix: prefix, checkpointFile: file, logLength: logLength)
        return (redis, prefix, file)
    }

    /// Every change is in the log, under the id its message carries; a restarted instance applies exactly what it
    /// missed (in order), resets nothing, and saves the log's end as its position.
    @Test func aRestartedInstanceAppliesWhatItMissedAndKeepsTheRest() async throws {
        let redis = try await RedisServerProcess.start()
        let folder = try TemporaryFolder.forCheckpoint()
        defer { folder.remove() }
        let (prefix, file) = (Self.prefix(), folder.checkpointFile)
        let first = TierInstance(redis, prefix: prefix, checkpointFile: file)
        try await first.startConnected()
        // No checkpoint yet: the first start resets (as before the log), and saves where it stands.
        #expect(first.events == [.reset] && first.statistics.resets == 1)
        await first.stop()
        let saved = try #require(LogPositionFile(path: file).load())

        let other = TierInstance(redis, prefix: prefix)
        try await other.startConnected()
        _ = try await other.tier.invalidate(.key("subscription:alice"))
        _ = try await other.tier.invalidate(.user("bob"))
        _ = try await other.tier.invalidate(.namespaces(["activities"], user: "carol"))

        let restarted = TierInstance(redis, prefix: prefix, checkpointFile: file)
        try await restarted.startConnected()
        let log = try await logPositions(redis, prefix: prefix)
        await restarted.stop()
        await other.stop()
        await redis.stop()

        #expect(
            restarted.events == [
                .invalidate(.key("subscription:alice")), .invalidate(.user("bob")),
                .invalidate(.namespaces(["activities"], user: "carol")),
            ])
        #expect(restarted.statistics.replayed == 3 && restarted.statistics.resets == 0)
        // The entry that started the epoch (the first instance's position), then the three changes.
        #expect(log.count == 4)
        #expect(saved.position == log.first)
        #expect(LogPositionFile(path: file).load() == LogCheckpoint(epoch: saved.epoch, position: log[log.count - 1]))
    }

    /// The log keeps about `logLength` changes: an instance away for many more finds its position trimmed away
    /// and drops its local tiers instead of applying a log with a hole.
    @Test func aRestartLongerThanTheLogReachesResets() async throws {
        let folder = try TemporaryFolder.forCheckpoint()
        defer { folder.remove() }
        let (redis, prefix, file) = try await Self.afterAFirstRun(in: folder, logLength: 10)
        let saved = try #require(LogPositionFile(path: file).load())

        let other = TierInstance(redis, prefix: prefix, logLength: 10)
        try await other.startConnected()
        for index in 0..<300 { _ = try await other.tier.invalidate(.key("k\(index)")) }
        let log = try await logPositions(redis, prefix: prefix)

        let restarted = TierInstance(redis, prefix: prefix, checkpointFile: file, logLength: 10)
        try await restarted.startConnected()
        await restarted.stop()
        await other.stop()
        await redis.stop()

        // Trimmed to whole stream nodes (`MAXLEN ~`): fewer than the 300 changes, at least the 10 asked for.
        #expect(log.count >= 10 && log.count < 300)
        #expect(try #require(log.first) > saved.position)
        #expect(restarted.events == [.reset])
        #expect(restarted.statistics.resets == 1 && restarted.statistics.replayed == 0)
    }

    /// Redis restarted empty is a new epoch: whatever the old log held is gone, so the instance resets; the new
    /// epoch's log then vouches for its next restart.
    @Test func redisRestartedEmptyIsANewEpochAndResets() async throws {
        let folder = try TemporaryFolder.forCheckpoint()
        defer { folder.remove() }
        let (redis, prefix, file) = try await Self.afterAFirstRun(in: folder)
        let before = try #require(LogPositionFile(path: file).load())

        try await redis.restart()
        let restarted = try await TierInstance.ranOnce(redis, prefix: prefix, checkpointFile: file)
        let after = try #require(LogPositionFile(path: file).load())
        let again = try await TierInstance.ranOnce(redis, prefix: prefix, checkpointFile: file)
        await redis.stop()

        #expect(restarted.events == [.reset] && restarted.statistics.resets == 1)
        #expect(after.epoch != before.epoch)
        #expect(again.events.isEmpty && again.statistics.resets == 0)
    }

    /// Redis restarted with its data (a snapshot taken with `SAVE` here; AOF in production, README) keeps the epoch
    /// and the log: an instance that lost its connection catches up and resets nothing.
    @Test func redisRestartedWithItsDataKeepsTheEpoch() async throws {
        let folder = try TemporaryFolder.forCheckpoint()
        defer { folder.remove() }
        let redis = try await RedisServerProcess.start(directory: folder.path)
        let prefix = Self.prefix()
        let instance = TierInstance(redis, prefix: prefix)
        try await instance.startConnected()
        let other = TierInstance(redis, prefix: prefix)
        try await other.startConnected()
        _ = try await other.tier.invalidate(.key("before"))
        await waitUntil("the change reaches the instance") { instance.events.contains(.invalidate(.key("before"))) }
        #expect(try await redisCommand(redis, "SAVE") == .status("OK"))

        try await redis.restart()
        // The other instance's pool may hold a broken connection or an open breaker for a moment.
        await waitUntil("a change after the restart is stored") {
            (try? await other.tier.invalidate(.key("after"))) != nil
        }
        await waitUntil("back in step with the change applied") {
            instance.statistics.connected && instance.events.contains(.invalidate(.key("after")))
        }
        await instance.stop()
        await other.stop()
        await redis.stop()
        // Its first start dropped its (empty) tiers, uncounted; nothing since.
        #expect(instance.events.filter { $0 == .reset }.count == 1 && instance.events.first == .reset)
        #expect(instance.statistics.resets == 0)
    }

    /// An instance that dies after applying part of what it missed (its disk flush for the second batch never
    /// returns) has saved only the batch it settled; the next start applies the rest from there, skipping nothing.
    @Test func dyingMidCatchUpNeverSkipsTheRest() async throws {
        let folder = try TemporaryFolder.forCheckpoint()
        defer { folder.remove() }
        let (redis, prefix, file) = try await Self.afterAFirstRun(in: folder)

        let other = TierInstance(redis, prefix: prefix)
        try await other.startConnected()
        for index in 1...5 { _ = try await other.tier.invalidate(.key("k\(index)")) }
        let log = try await logPositions(redis, prefix: prefix)
        let changes = Array(log.suffix(5))

        // Batches of 2: settle 1 (the batch k1, k2), settle 2 (its checkpoint), then the batch k3, k4 never settles.
        let dying = TierInstance(redis, prefix: prefix, checkpointFile: file, catchUpBatch: 2)
        dying.holdSettles(after: 2)
        dying.start()
        await waitUntil("the second batch is applied and its flush hangs") { dying.heldSettles == 1 }
        let savedWhileDying = LogPositionFile(path: file).load()?.position
        // (Read now: once its flush is let go, at its stop, the hung instance goes on.)
        let appliedWhileDying = dying.events

        let next = TierInstance(redis, prefix: prefix, checkpointFile: file)
        try await next.startConnected()
        await next.stop()
        await dying.stop()
        await other.stop()
        await redis.stop()

        #expect(appliedWhileDying == (1...4).map { .invalidate(.key("k\($0)")) })
        #expect(dying.statistics.resets == 0)
        #expect(savedWhileDying == changes[1])
        #expect(next.events == (3...5).map { .invalidate(.key("k\($0)")) })
        #expect(next.statistics.resets == 0 && next.statistics.replayed == 3)
    }

    /// A graceful stop waits for the changes the log holds to arrive on the channel before its last checkpoint:
    /// a change logged, and published only once the stop has begun, is applied and claimed by the checkpoint, so a
    /// restart does not replay it. (The instance's own last store is such a change: replayed by the restarted
    /// instance, a new origin, it would drop the copy the disk keeps.)
    @Test func aStopWaitsForTheLogsLastChangeBeforeItsCheckpoint() async throws {
        let redis = try await RedisServerProcess.start()
        let folder = try TemporaryFolder.forCheckpoint()
        defer { folder.remove() }
        let (prefix, file) = (Self.prefix(), folder.checkpointFile)
        let instance = TierInstance(redis, prefix: prefix, checkpointFile: file)
        try await instance.startConnected()
        let id = try #require(
            try await redisCommand(redis, "XADD", prefix + "#log", "*", "m", "v2|elsewhere|key|late").text)
        let stopping = Task {
            await instance.tier.catchUpBeforeStop()
            return instance.events
        }
        _ = try await redisCommand(redis, "PUBLISH", prefix + "inval", "v2|elsewhere|\(id)|key|late")
        let seenBeforeTheStop = await stopping.value
        await instance.stop()
        await redis.stop()
        #expect(seenBeforeTheStop.contains(.invalidate(.key("late"))), "\(seenBeforeTheStop)")
        #expect(LogPositionFile(path: file).load()?.position == LogPosition(id))
    }

    /// A lost connection (the subscriber's client killed) is caught up from the position in memory, without a
    /// checkpoint file and without a reset: what changed meanwhile is applied.
    @Test func aLostConnectionCatchesUpWithoutAFile() async throws {
        let redis = try await RedisServerProcess.start()
        let prefix = Self.prefix()
        let instance = TierInstance(redis, prefix: prefix)
        try await instance.startConnected()
        let other = TierInstance(redis, prefix: prefix)
        try await other.startConnected()
        // Killing the pub/sub clients loses the channel (its messages meanwhile are gone for good); the change
        // right after it most likely lands before the subscriber's first retry (100 ms later), so it comes back
        // from the log, else on the channel: either way it is applied and nothing is reset.
        _ = try await redisCommand(redis, "CLIENT", "KILL", "TYPE", "pubsub")
        _ = try await other.tier.invalidate(.key("while-away"))
        await waitUntil("back in step with the change applied") {
            instance.statistics.connected && instance.events.contains(.invalidate(.key("while-away")))
        }
        await instance.stop()
        await other.stop()
        await redis.stop()
        #expect(instance.statistics.resets == 0)  // none: its first start had nothing stored to drop
        #expect(instance.events.filter { $0 == .invalidate(.key("while-away")) }.count >= 1)
    }

    /// A fresh redis-server with a user `deaf` allowed every key and command and the channels `channels` gives (`&*`
    /// every one, `resetchannels` none); an instance of the fleet in step, and one (not started) connecting as `deaf`,
    /// on `ticker`.
    static func fleetWithUserDeaf(
        channels: String, ticker: any Clock<Duration> = ContinuousClock()
    ) async throws -> (RedisServerProcess, other: TierInstance, deaf: TierInstance) {
        let redis = try await RedisServerProcess.start()
        let prefix = Self.prefix()
        _ = try await redisCommand(redis, "ACL", "SETUSER", "deaf", "on", ">pw", "~*", channels, "+@all")
        var endpoint = redis.endpoint
        (endpoint.user, endpoint.password) = ("deaf", "pw")
        let other = TierInstance(redis, prefix: prefix)
        try await other.startConnected()
        return (redis, other, TierInstance(endpoint: endpoint, prefix: prefix, ticker: ticker))
    }

    /// While its channel is lost and Redis answers (here its user may no longer subscribe: Redis drops the
    /// subscription and refuses the next ones), an instance reads the fleet's log instead: another instance's change
    /// is applied while the channel is still lost, not once it is back.
    @Test func aLostChannelIsStoodInForByTheLogWhileRedisAnswers() async throws {
        let (redis, other, instance) = try await Self.fleetWithUserDeaf(channels: "&*")
        try await instance.startConnected()
        _ = try await redisCommand(redis, "ACL", "SETUSER", "deaf", "resetchannels")
        await waitUntil("the channel is lost") { !instance.statistics.connected }
        _ = try await other.tier.invalidate(.key("while-deaf"))
        await waitUntil("the change is applied") { instance.events.contains(.invalidate(.key("while-deaf"))) }
        let deafMeanwhile = !instance.statistics.connected
        await instance.stop()
        await other.stop()
        await redis.stop()
        #expect(deafMeanwhile)
        #expect(instance.statistics.resets == 0 && instance.statistics.replayed == 1)
    }

    /// The log is read on a timer only while a channel is lost: an instance in step has no sleep of the log's pace on
    /// its clock (it waits for a loss); once its channel is lost it sleeps one, and reads the log when the clock
    /// passes it.
    @Test func theLogIsFollowedOnATimerOnlyWhileAChannelIsLost() async throws {
        let ticker = ManualClock()
        let (redis, other, instance) = try await Self.fleetWithUserDeaf(channels: "&*", ticker: ticker)
        try await instance.startConnected()
        let pace = RedisSharedTier.logFollowingInterval
        func pacedSleeps() -> Int { ticker.sleepers - ticker.sleepers(beyond: pace) }
        let pacedInStep = pacedSleeps()
        _ = try await redisCommand(redis, "ACL", "SETUSER", "deaf", "resetchannels")
        await waitUntil("the channel is lost") { !instance.statistics.connected }
        await waitUntil("the log followed at its pace") { pacedSleeps() == 1 }
        _ = try await other.tier.invalidate(.key("while-deaf"))
        ticker.advance(by: pace)
        await waitUntil("the change is applied") { instance.events.contains(.invalidate(.key("while-deaf"))) }
        await instance.stop()
        await other.stop()
        await redis.stop()
        #expect(pacedInStep == 0)
    }

    /// An instance whose user may never subscribe (a rule missing from its ACL user) is not in step, and says so; it
    /// still hears the fleet: it takes the log's end as its position, then applies what follows.
    @Test func aChannelRefusedFromTheStartIsStoodInForByTheLog() async throws {
        let (redis, other, instance) = try await Self.fleetWithUserDeaf(channels: "resetchannels")
        instance.start()
        await waitUntil("the log's end taken as the position") { instance.events == [.reset] }
        _ = try await other.tier.invalidate(.key("never-subscribed"))
        await waitUntil("the change is applied") { instance.events.contains(.invalidate(.key("never-subscribed"))) }
        let statistics = instance.statistics
        await instance.stop()
        await other.stop()
        await redis.stop()
        #expect(!statistics.connected && statistics.replayed == 1)
    }

    /// A log emptied (deleted by hand, or evicted) while the channel is lost cannot vouch: the local tiers are reset
    /// once, and not again at each later read of the still empty log.
    @Test func anEmptiedLogResetsOnceWhileTheChannelIsLost() async throws {
        let (redis, other, instance) = try await Self.fleetWithUserDeaf(channels: "resetchannels")
        instance.start()
        await waitUntil("the log's end taken as the position") { instance.events == [.reset] }
        _ = try await redisCommand(redis, "DEL", other.tier.keys.log(0))
        await waitUntil("the emptied log reset the tiers") { instance.events == [.reset, .reset] }
        func logReads() -> Int { instance.statistics.operations[.init("log", "ok"), default: 0] }
        let readsThen = logReads()
        await waitUntil("five more reads of the empty log") { logReads() >= readsThen + 5 }
        let events = instance.events
        await instance.stop()
        await other.stop()
        await redis.stop()
        #expect(events == [.reset, .reset])
    }
}

/// A whole log's worth of missed changes (the default 100,000) is applied in batches, in order, and the time it
/// takes is bounded (the README's catch-up figure comes from this test's log line).
@Suite(.serialized, .timeLimit(.minutes(3))) struct FullLogCatchUpTests {
    @Test func aFullLogIsCaughtUpInBatches() async throws {
        let folder = try TemporaryFolder.forCheckpoint()
        defer { folder.remove() }
        let (redis, prefix, file) = try await LogCatchUpTests.afterAFirstRun(in: folder)
        // 100,000 changes of another instance, written straight into the log as the scripts write them.
        _ = try await redisCommand(
            redis, "EVAL",
            "for i = 1, 100000 do redis.call('XADD', KEYS[1], 'MAXLEN', '~', 100000, '*', 'm', 'v2|elsewhere|key|k' .. i) end",
            "1", prefix + "#log")

        let restarted = TierInstance(redis, prefix: prefix, checkpointFile: file)
        let started = ContinuousClock.now
        try await restarted.startConnected()
        let elapsed = ContinuousClock.now - started
        await restarted.stop()
        let last = try await logPositions(redis, prefix: prefix).last
        await redis.stop()
        print("caught up 100,000 log entries in \(elapsed)")

        #expect(restarted.events == (1...100_000).map { .invalidate(.key("k\($0)")) })
        #expect(restarted.statistics.replayed == 100_000 && restarted.statistics.resets == 0)
        #expect(LogPositionFile(path: file).load()?.position == last)
        #expect(elapsed < .seconds(60))
    }
}
