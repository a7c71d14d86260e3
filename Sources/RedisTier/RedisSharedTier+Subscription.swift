import Logging
import Redis
import UnifiedCache

/// The invalidation channel: other instances' messages become events for the manager; a (re)subscription catches
/// up from the fleet's log, from the position this instance has applied (CONTRACT §6.6).
extension RedisSharedTier {
    public func start(events: @escaping @Sendable (SharedTierEvent) -> Void, settled: @escaping @Sendable () async -> Void) {
        hooks.withLockedValue {
            $0.handler = events
            $0.settled = settled
        }
    }

    /// The subscription (a new session after each primary switch), the fleet membership's announcements and the
    /// checkpoint's writes, as child tasks of the caller's until it is cancelled. Then the checkpoint is written once
    /// more (the caller has flushed the local tiers' writes), events stop and the command connections close.
    public func run() async {
        commands.link.node?.onPrimarySwitch { [weak self] in self?.primarySwitched() }
        logger.info(
            "shared tier started",
            metadata: ["redis": "\(configuration.endpoint)", "prefix": "\(configuration.prefix)", "instance": "\(commands.instanceID)"])
        await withDiscardingTaskGroup { group in
            for shard in shards { group.addTask { await self.runSubscriptions(shard) } }
            group.addTask { await self.followLogs() }
            group.addTask { await self.membership.run() }
            if let cluster = commands.link.cluster { group.addTask { await self.watchMap(cluster) } }
            if checkpointFile != nil {
                let interval = configuration.checkpointInterval
                group.addTask {
                    await self.elapsed.repeating(every: interval) {
                        await self.saveCheckpoint()
                        return true
                    }
                }
            }
        }
        await saveCheckpoint()
        hooks.withLockedValue {
            $0.handler = nil
            $0.settled = nil
        }
        commands.link.shutdown()
        waiters.wakeAll()
    }

    /// Reads the slot map again while a shard's primary is down, every second (nothing else reads a map whose
    /// commands succeed, so `slotsCovered` would not see the shard back when its primary returns), and every
    /// `clusterMapRefresh` anyway (a replica added or attached since, a slot moved that no command met). While a
    /// shard's channel is lost, every 100 ms: when the map gets better (a replica promoted, a primary back), the lost
    /// channels are subscribed again at once, not after their back-off (grown to seconds by then), during which the
    /// other instances' writes to the shard, accepted from the promotion on, went unheard and local copies of its
    /// keys stayed served. Only on that change, so that a channel refused for another reason keeps its back-off.
    private func watchMap(_ cluster: RedisClusterClient) async {
        let tick = Duration.milliseconds(100)
        var sinceRead = Duration.zero
        var last = cluster.map.map { (served: $0.slotsServed, primaries: $0.primaries) }
        await elapsed.repeating(every: tick) {
            sinceRead += tick
            let lost = shards.compactMap { shard in shard.isConnected ? nil : shard.subscriber }
            let degraded = cluster.map.map { $0.slotsServed < $0.slotsCovered } ?? false
            guard !lost.isEmpty || degraded && sinceRead >= .seconds(1) || sinceRead >= configuration.clusterMapRefresh
            else { return true }
            sinceRead = .zero
            guard let map = await cluster.refreshMap() else { return true }
            if let before = last, map.slotsServed > before.served || map.primaries != before.primaries {
                lost.forEach { $0.retryNow() }
            }
            last = (map.slotsServed, map.primaries)
            return true
        }
    }

    /// One subscriber of `shard`'s channel after another until cancelled: a primary switch stops the current one
    /// (`primarySwitched`).
    private func runSubscriptions(_ shard: ShardSync) async {
        while !Task.isCancelled {
            let subscriber = makeSubscriber(shard)
            shard.install(subscriber)
            await subscriber.run()
        }
        shard.install(nil)
    }

    /// On one Redis a `SUBSCRIBE` on its (primary) node; on a cluster a `SSUBSCRIBE` on the primary serving the
    /// shard's slot, the map read again when that fails (a failover, a slot moved).
    func makeSubscriber(_ shard: ShardSync) -> RedisSubscriber {
        let channel = keys.channel(shard.index)
        var subscribe: RedisSubscriber.Subscribe?
        if let cluster = commands.link.cluster {
            subscribe = { () async throws(RedisError) -> RedisSubscription in
                do throws(RedisError) {
                    return try await cluster.shardedSubscription(to: [channel])
                } catch {
                    _ = await cluster.refreshMap()
                    throw error
                }
            }
        }
        return RedisSubscriber(
            endpoint: commands.link.endpoint, channel: channel, timeout: max(configuration.timeout, .seconds(1)),
            clock: ticker, failures: commands.link.node?.connectFailures ?? subscriptionFailures, logger: logger, subscribe: subscribe
        ) { [weak self, shard] event in
            self?.handle(event, shard: shard)
        }
    }

    /// A failover (CONTRACT §10.3) is a reconnection (§6.6): out of step, then subscribed on the new primary and
    /// caught up from its log (or reset when it cannot vouch for the position).
    func primarySwitched() {
        guard hooks.withLockedValue({ $0.handler != nil }) else { return }
        for shard in shards {
            guard let subscriber = shard.subscriber else { continue }
            handle(.disconnected("the Redis primary switched"), shard: shard)
            // Its `run` returns, and `runSubscriptions` starts the next session with a new subscriber.
            subscriber.stop()
        }
    }

    func handle(_ event: RedisSubscriber.Event, shard: ShardSync) {
        let sync = shard.state
        switch event {
        case .message(let bytes):
            guard let message = InvalidationMessage(bytes) else {
                commands.counters.operation("message", "malformed")
                dropLocalTiers(because: "an invalidation message could not be read")
                waiters.wakeAll()
                return
            }
            let ownMessage = message.origin == commands.instanceID
            // Applied first, then counted in the position: a checkpoint never claims a message not yet applied.
            if !ownMessage {
                hooks.withLockedValue { $0.handler }?(message.event)
                // Counted once applied: a reader who saw the count can rely on the local tiers having dropped it.
                commands.counters.received()
            }
            sync.withLockedValue { state in
                if state.inStep, var applied = state.applied {
                    applied.position = max(applied.position, message.position)
                    state.applied = applied
                } else {
                    state.live = max(state.live ?? .zero, message.position)
                }
            }
            if let key = message.key {
                waiters.wake(key)
                waiters.wake(Self.appliedWaiters)
            } else {
                waiters.wakeAll()
            }
        case .disconnected(let reason):
            let first = sync.withLockedValue { state -> Bool in
                state.generation &+= 1
                state.live = nil
                state.channelLost = true
                defer { state.inStep = false }
                return state.inStep
            }
            channelLosses.continuation.yield()
            if first {
                var metadata: Logger.Metadata = ["reason": "\(reason)"]
                if shards.count > 1 { metadata["shard"] = "\(SharedShard(index: shard.index, of: shards.count))" }
                logger.warning("shared tier: invalidation channel lost", metadata: metadata)
            }
            waiters.wakeAll()
        case .subscribed:
            let generation = sync.withLockedValue { state in
                state.generation &+= 1
                state.live = nil
                state.channelLost = false
                return state.generation
            }
            Task { await self.catchUp(shard, generation: generation) }
        }
    }

    /// After a (re)subscription: the fleet's epoch and log against the position this instance has applied. The same
    /// epoch and a log that still holds that position: apply what follows it, keep every other local entry.
    /// Otherwise (Redis restarted empty, the log trimmed past the position, or no position known): reset the local
    /// tiers. Retried until Redis answers or the channel is lost again.
    func catchUp(_ shard: ShardSync, generation: UInt64) async {
        let sync = shard.state
        while isCurrent(shard, generation) {
            let fleet: (epoch: String, last: LogPosition)
            do throws(SharedTierUnavailable) { fleet = try await fleetPosition(shard.index) } catch {
                guard shard.isConnected else { return }
                await waiters.wait(for: "#position", atMost: .milliseconds(100))
                continue
            }
            let started = elapsed.now()
            let from = sync.withLockedValue { $0.applied }
            var outcome = CatchUp.gap(reached: from)
            if let from, from.epoch == fleet.epoch {
                outcome = await replay(shard, from: from, generation: generation)
            }
            switch outcome {
            case .unavailable:
                guard shard.isConnected else { return }
                await waiters.wait(for: "#position", atMost: .milliseconds(100))
                continue
            case .interrupted:
                return
            case .caughtUp(let end, let replayed):
                let inStep = sync.withLockedValue { state -> Bool in
                    guard state.generation == generation, state.applied == end else { return false }
                    state.applied?.position = max(end.position, state.live ?? .zero)
                    state.inStep = true
                    state.vouched = true
                    return true
                }
                guard inStep else { return }
                report(
                    shard, .caughtUp(replayed: replayed),
                    metadata: [
                        "replayed": "\(replayed)", "position": "\(end.position)",
                        "duration": "\(elapsed.now() - started)",
                    ])
            case .gap(let reached):
                guard
                    await reset(
                        shard, from: reached, to: LogCheckpoint(epoch: fleet.epoch, position: fleet.last),
                        generation: generation)
                else { return }
                report(
                    shard, .reset,
                    metadata: ["position": "\(fleet.last)", "knownBefore": "\(reached.map { "\($0.position)" } ?? "none")"])
            }
            await saveCheckpoint()
            return
        }
    }

    /// Logs a shard's catch-up: at once on one Redis and for a shard's later catch-ups; on a cluster the shards'
    /// first ones at debug, and one line once every shard is in step.
    private func report(_ shard: ShardSync, _ outcome: FirstCatchUps.Outcome, metadata: Logger.Metadata) {
        let message: Logger.Message
        switch outcome {
        case .caughtUp: message = "shared tier: subscribed; caught up from the fleet's log"
        case .reset: message = "shared tier: subscribed; the fleet's log cannot vouch for what was missed, local tiers reset"
        }
        guard shards.count > 1 else { return logger.info(message, metadata: metadata) }
        var metadata = metadata
        metadata["shard"] = "\(SharedShard(index: shard.index, of: shards.count))"
        let (first, last, summary) = firstCatchUps.withLockedValue { firsts in
            let (first, last) = firsts.count(shard.index, outcome)
            return (first, last, firsts)
        }
        guard first else { return logger.info(message, metadata: metadata) }
        logger.debug(message, metadata: metadata)
        guard last else { return }
        logger.info(
            "shared tier: subscribed to every shard; caught up from their logs, or reset where a log cannot vouch for what was missed",
            metadata: [
                "shards": "\(shards.count)", "caughtUp": "\(summary.caughtUp)", "reset": "\(summary.reset)",
                "replayed": "\(summary.replayed)",
            ])
    }

    enum CatchUp {
        /// Applied up to the log's end (`end`), `replayed` changes of other instances.
        case caughtUp(end: LogCheckpoint, replayed: Int)
        /// The log cannot vouch for the local tiers: it does not hold the position any more (trimmed past, or Redis
        /// lost it), or holds an entry this instance cannot read. `reached`: where the local tiers stand (batches
        /// applied before it included).
        case gap(reached: LogCheckpoint?)
        /// Redis could not be asked.
        case unavailable
        /// The subscription this catch-up was for is gone.
        case interrupted
    }

    /// Applies the log's entries after `from`, a batch at a time; each batch starts with the entry at the position
    /// reached (so a trimmed log shows as a gap, never as a silent jump), is settled in the local tiers, and only
    /// then advances the position (a crash mid-way replays from the last settled batch, never skips).
    func replay(_ shard: ShardSync, from: LogCheckpoint, generation: UInt64) async -> CatchUp {
        let sync = shard.state
        let log = keys.log(shard.index)
        var position = from
        var replayed = 0
        while true {
            guard isCurrent(shard, generation) else { return .interrupted }
            let reply: RedisReply
            do throws(SharedTierUnavailable) {
                reply = try await commands.run(
                    "log",
                    .xrange(log, from: "\(position.position)", to: "+", count: configuration.catchUpBatch + 1), key: log)
            } catch {
                return .unavailable
            }
            guard let entries = Self.logEntries(reply), entries.first?.position == position.position else {
                return .gap(reached: position)
            }
            let changes = entries.dropFirst()
            // Stopped: nothing applies any more, so the position must not move.
            guard let handler = hooks.withLockedValue({ $0.handler }) else { return .interrupted }
            for entry in changes {
                let message: InvalidationMessage
                switch entry.record {
                case .epochStart: continue
                case .unreadable:
                    // What it changed cannot be told: the log cannot vouch for the local tiers.
                    commands.counters.operation("log", "malformed")
                    warnUnreadable("an entry of the fleet's log could not be read")
                    return .gap(reached: position)
                case .change(let change): message = change
                }
                guard message.origin != commands.instanceID else { continue }
                handler(message.event)
                replayed += 1
                commands.counters.replayed(1)
            }
            guard let last = changes.last else { return .caughtUp(end: position, replayed: replayed) }
            await settle()
            let next = LogCheckpoint(epoch: position.epoch, position: last.position)
            let advanced = sync.withLockedValue { state -> Bool in
                // Only for its own subscription (or loss): a newer one's catch-up reads from where it found the log.
                guard state.applied == position, state.generation == generation else { return false }
                state.applied = next
                return true
            }
            guard advanced else { return .interrupted }
            position = next
            await saveCheckpoint()
            if changes.count < configuration.catchUpBatch { return .caughtUp(end: position, replayed: replayed) }
        }
    }

    /// Drops the local tiers (the log cannot vouch for the gap) and takes the log's end as the position: when
    /// `subscribed`, the subscription is up, so what follows arrives on the channel (in step); else `followLogs`
    /// reads on from there. `false` when the subscription (or loss) it was for is gone.
    func reset(
        _ shard: ShardSync, from: LogCheckpoint?, to end: LogCheckpoint, generation: UInt64, subscribed: Bool = true
    ) async -> Bool {
        guard let handler = hooks.withLockedValue({ $0.handler }),
            subscribed || shard.state.withLockedValue({ $0.generation == generation })
        else { return false }
        handler(shards.count == 1 ? .reset : .resetShard(SharedShard(index: shard.index, of: shards.count)))
        // Without a position or a disk tier nothing was stored before start-up: dropping empty tiers is no reset.
        if from != nil || checkpointFile != nil { commands.counters.reset() }
        await settle()
        return shard.state.withLockedValue { state -> Bool in
            guard state.applied == from, subscribed || state.generation == generation else { return false }
            state.applied = end
            state.vouched = true
            guard subscribed else { return true }
            guard state.generation == generation else { return false }
            state.applied?.position = max(end.position, state.live ?? .zero)
            state.inStep = true
            return true
        }
    }

    /// A shard's epoch (created with the log's first entry when Redis has none) and its log's last id.
    func fleetPosition(_ shard: Int) async throws(SharedTierUnavailable) -> (epoch: String, last: LogPosition) {
        let reply = try await commands.run(
            "position", RedisScripts.position, keys: [keys.epoch(shard), keys.log(shard)],
            arguments: [RedisCommands.randomToken(), "\(configuration.logLength)"])
        guard case .array(let parts) = reply, parts.count == 2, let epoch = parts[0].text, let last = parts[1].text
        else { throw SharedTierUnavailable(reason: "unexpected position reply") }
        // An empty log (deleted by hand): a position no log holds, so the next check cannot vouch either.
        return (epoch, LogPosition(last) ?? .zero)
    }

    private func isCurrent(_ shard: ShardSync, _ generation: UInt64) -> Bool {
        shard.state.withLockedValue { !$0.inStep && $0.generation == generation }
    }
}
