import Logging
import UnifiedCache

/// While a shard's channel is lost, its log stands in for it (CONTRACT §6.4, §13.2: no instance serves an old value
/// later than 100 ms after the change).
extension RedisSharedTier {
    /// How often the log of a shard whose channel is lost is read.
    static let logFollowingInterval = Duration.milliseconds(50)

    /// Every 50 ms, the log of each shard whose channel is lost while its Redis answers is read and applied as a
    /// catch-up applies it. Redis may accept other instances' changes before this instance's channel is back: on a
    /// cluster from a replica's promotion on, on one Redis from its return, or all along when only the subscription
    /// fails (a client killed, a user no longer allowed the channel); the channel comes back after its back-off, grown
    /// to seconds in an outage, and meanwhile the local copies of what those changes concern would stay served. A log
    /// that cannot vouch for the position resets the shard's local entries. Once subscribed again, the subscription's
    /// own catch-up goes on from where this left the position. While every channel is up it waits for a loss, without
    /// a timer (an idle instance is not woken twenty times a second); a loss told before the wait is kept for it.
    func followLogs() async {
        var losses = channelLosses.stream.makeAsyncIterator()
        while !Task.isCancelled {
            guard shards.contains(where: { $0.state.withLockedValue(\.channelLost) }) else {
                guard await losses.next() != nil else { return }
                continue
            }
            do { try await elapsed.sleep(for: Self.logFollowingInterval) } catch { return }
            await withDiscardingTaskGroup { group in
                for shard in shards where shard.state.withLockedValue(\.channelLost) {
                    group.addTask { await self.followLog(shard) }
                }
            }
        }
    }

    /// One read of `shard`'s log from the position applied, when Redis answers for it and no subscription (with its
    /// own catch-up) runs. Without a position yet (a first subscription refused), or a log that cannot vouch for it,
    /// the shard's local entries are reset and the log's end is the position; read to its end, the entries stored
    /// before start-up are vouched for, as by a catch-up.
    func followLog(_ shard: ShardSync) async {
        guard commands.link.nodeNow(forKey: Array(keys.log(shard.index).utf8))?.isAvailable == true else { return }
        guard let (from, generation) = shard.state.withLockedValue({ $0.channelLost ? ($0.applied, $0.generation) : nil })
        else { return }
        var reached = from
        if let from {
            switch await replay(shard, from: from, generation: generation) {
            case .caughtUp(let end, _):
                return shard.state.withLockedValue { state in
                    if state.generation == generation, state.applied == end { state.vouched = true }
                }
            case .gap(let position): reached = position
            case .unavailable, .interrupted: return
            }
        }
        guard let fleet = try? await fleetPosition(shard.index) else { return }
        let end = LogCheckpoint(epoch: fleet.epoch, position: fleet.last)
        // Already reset to this end (the log emptied: no entry holds the position): nothing changed since, and each
        // read would otherwise drop the local tiers again, twenty times a second.
        guard end != reached else { return }
        guard await reset(shard, from: reached, to: end, generation: generation, subscribed: false) else { return }
        var metadata: Logger.Metadata = ["position": "\(fleet.last)", "knownBefore": "\(reached.map { "\($0.position)" } ?? "none")"]
        if shards.count > 1 { metadata["shard"] = "\(SharedShard(index: shard.index, of: shards.count))" }
        logger.info("shared tier: channel lost; the fleet's log cannot vouch for what was missed, local tiers reset", metadata: metadata)
    }
}
