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
    /// own catch-up goes on from where this left the position.
    func followLogs() async {
        await elapsed.repeating(every: Self.logFollowingInterval) {
            await withDiscardingTaskGroup { group in
                for shard in shards where shard.state.withLockedValue(\.readsTheLog) {
                    group.addTask { await self.followLog(shard) }
                }
            }
            return true
        }
    }

    /// One read of `shard`'s log from the position applied, when Redis answers for it and no subscription (with its
    /// own catch-up) runs. Not before the shard's first catch-up: until then the entries stored before start-up wait
    /// for it (`vouchesForStoredEntries`), and memory holds nothing older than the instance.
    func followLog(_ shard: ShardSync) async {
        guard commands.link.nodeNow(forKey: Array(keys.log(shard.index).utf8))?.isAvailable == true else { return }
        let lost = shard.state.withLockedValue { state in
            state.readsTheLog ? state.applied.map { (from: $0, generation: state.generation) } : nil
        }
        guard let lost, case .gap(let reached) = await replay(shard, from: lost.from, generation: lost.generation),
            let fleet = try? await fleetPosition(shard.index)
        else { return }
        let end = LogCheckpoint(epoch: fleet.epoch, position: fleet.last)
        guard await reset(shard, from: reached, to: end, generation: lost.generation, subscribed: false) else { return }
        var metadata: Logger.Metadata = ["position": "\(fleet.last)", "knownBefore": "\(reached.map { "\($0.position)" } ?? "none")"]
        if shards.count > 1 { metadata["shard"] = "\(SharedShard(index: shard.index, of: shards.count))" }
        logger.info("shared tier: channel lost; the fleet's log cannot vouch for what was missed, local tiers reset", metadata: metadata)
    }
}
