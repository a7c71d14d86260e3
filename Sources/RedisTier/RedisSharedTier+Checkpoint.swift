import Redis
import UnifiedCache

/// The file that keeps this instance's positions in the fleet's logs across restarts (`LogPositionFile`).
extension RedisSharedTier {
    /// Writes the checkpoint if it moved: the position is read first, then the local tiers settle, then it is
    /// written, so the file never claims a change its disk tier has not applied.
    /// Saves run at once (each shard's catch-up, the periodic one, the last): each takes its snapshot with a ticket,
    /// and a save whose snapshot is older than the one written last writes nothing, so the file never goes back to
    /// an older snapshot while the positions say it holds a newer one.
    func saveCheckpoint() async {
        guard let checkpointFile else { return }
        let (ticket, positions) = checkpointWrites.withLockedValue { writes in
            writes.issued += 1
            return (writes.issued, shards.map { $0.state.withLockedValue { ($0.applied, $0.saved) } })
        }
        guard positions.contains(where: { $0.0 != $0.1 }) else { return }
        var checkpoints: [Int: LogCheckpoint] = [:]
        for (shard, position) in positions.enumerated() { checkpoints[shard] = position.0 }
        await settle()
        let written = checkpointWrites.withLockedValue { writes -> Bool in
            guard ticket > writes.written else { return true }
            guard checkpointFile.save(shards: checkpoints) else { return false }
            writes.written = ticket
            for (shard, checkpoint) in zip(shards, positions.map(\.0)) {
                shard.state.withLockedValue { $0.saved = checkpoint }
            }
            return true
        }
        if !written {
            logger.warning("shared tier: the log checkpoint could not be written", metadata: ["file": "\(checkpointFile.path)"])
        }
    }

    func settle() async {
        await hooks.withLockedValue { $0.settled }?()
    }
}
