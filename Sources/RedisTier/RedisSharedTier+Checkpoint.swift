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

    /// Before the last checkpoint of a graceful stop: waits until every change the logs hold now has come on the
    /// channel and is applied, this instance's own among them, each shard for at most the tier's timeout. A store
    /// announced just before the stop would else be missing from the checkpoint, and the restarted instance (a new
    /// origin) would replay it as another's change and drop the copy its own disk keeps.
    public func catchUpBeforeStop() async {
        await withDiscardingTaskGroup { group in
            for shard in shards where shard.inStep {
                group.addTask { await self.awaitApplied(logEndOf: shard) }
            }
        }
    }

    /// The waiters' key that every applied message wakes (as well as its own key).
    static let appliedWaiters = "#applied"

    private func awaitApplied(logEndOf shard: ShardSync) async {
        let log = keys.log(shard.index)
        guard let reply = try? await commands.run("log", .xrevrange(log, count: 1), key: log),
            let end = Self.logEntries(reply)?.first?.position
        else { return }
        let deadline = elapsed.now() + configuration.timeout
        while elapsed.now() < deadline, shard.inStep {
            // Armed before looking, as `awaitFill` does: a message applied meanwhile wakes the wait below at once.
            let ticket = waiters.arm(Self.appliedWaiters)
            if shard.state.withLockedValue({ $0.applied.map { $0.position >= end } ?? false }) {
                waiters.disarm(ticket)
                return
            }
            await waiters.wait(ticket, atMost: deadline - elapsed.now())
        }
        logger.debug("shared tier: stopping before the log's last change arrived", metadata: ["log": "\(log)"])
    }

    func settle() async {
        await hooks.withLockedValue { $0.settled }?()
    }
}
