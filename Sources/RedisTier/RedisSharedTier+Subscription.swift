import Foundation
import RedisClient
import UnifiedCache

/// The invalidation channel: other instances' messages become events for the manager; a (re)subscription
/// compares the fleet's position with the one held when the subscription was lost (CONTRACT §6.6).
extension RedisSharedTier {
    public func start(events: @escaping @Sendable (SharedTierEvent) -> Void) {
        sync.withLockedValue { $0.handler = events }
        let subscriber = RedisSubscriber(
            endpoint: configuration.endpoint, channel: keys.channel, timeout: max(configuration.timeout, .seconds(1))
        ) { [weak self] event in
            self?.handle(event)
        }
        if let previous = swapSubscriber(subscriber) { Thread.detachNewThread { previous.stop() } }
        subscriber.start()
        membership.start()
        logger.info(
            "shared tier started",
            metadata: ["redis": "\(configuration.endpoint)", "prefix": "\(configuration.prefix)", "instance": "\(commands.instanceID)"])
    }

    /// Joining the subscriber's thread blocks: done on a thread of its own, never on the cooperative commands.pool.
    public func stop() async {
        sync.withLockedValue { $0.handler = nil }
        membership.stop()
        let subscriber = swapSubscriber(nil)
        let pool = commands.pool
        await withCheckedContinuation { (done: CheckedContinuation<Void, Never>) in
            Thread.detachNewThread {
                subscriber?.stop()
                pool.shutdown()
                done.resume()
            }
        }
        waiters.wakeAll()
    }

    func handle(_ event: RedisSubscriber.Event) {
        switch event {
        case .message(let bytes):
            guard let message = InvalidationMessage(bytes) else {
                commands.counters.operation("message", "malformed")
                return
            }
            let handler = sync.withLockedValue { state -> (@Sendable (SharedTierEvent) -> Void)? in
                state.sequence = max(state.sequence, message.sequence)
                return message.origin == commands.instanceID ? nil : state.handler
            }
            if message.origin != commands.instanceID {
                commands.counters.received()
                handler?(.invalidate(message.scope))
            }
            if case .key(let key) = message.scope { waiters.wake(key) } else { waiters.wakeAll() }
        case .disconnected(let reason):
            let first = sync.withLockedValue { state -> Bool in
                state.generation &+= 1
                guard state.lost == nil else { return false }
                state.lost = (state.epoch, state.sequence)
                return true
            }
            if first { logger.warning("shared tier: invalidation channel lost", metadata: ["reason": "\(reason)"]) }
            waiters.wakeAll()
        case .subscribed:
            let generation = sync.withLockedValue { state in
                state.generation &+= 1
                return state.generation
            }
            Task { await self.checkPosition(generation: generation) }
        }
    }

    /// After a (re)subscription: the fleet's epoch and sequence against those held when the channel was lost.
    /// Equal: nothing was missed. Different or unknown: reset the local tiers. Retried until Redis answers or
    /// the channel is lost again.
    func checkPosition(generation: UInt64) async {
        while sync.withLockedValue({ $0.lost != nil && $0.generation == generation }) {
            let reply: RedisReply
            do throws(SharedTierUnavailable) {
                reply = try await commands.run(
                    "position",
                    RedisScripts.position, keys: [keys.epoch, keys.sequence], arguments: [RedisCommands.randomToken()])
            } catch {
                guard subscriberConnected else { return }
                await waiters.wait(for: "#position", atMost: .milliseconds(100))
                continue
            }
            guard case .array(let parts) = reply, parts.count == 2, case .string(let epochBytes) = parts[0],
                case .string(let sequenceBytes) = parts[1], let sequence = Int(String(decoding: sequenceBytes, as: UTF8.self))
            else { return }
            let epoch = String(decoding: epochBytes, as: UTF8.self)
            let check = sync.withLockedValue { state -> (missed: Bool, handler: (@Sendable (SharedTierEvent) -> Void)?)? in
                guard let lost = state.lost, state.generation == generation else { return nil }
                return (lost.epoch != epoch || lost.sequence != sequence, state.handler)
            }
            guard let check else { return }
            // The reset happens before the tier reports itself in step again.
            if check.missed { check.handler?(.reset) }
            sync.withLockedValue { state in
                guard let lost = state.lost, state.generation == generation else { return }
                state.lost = nil
                state.epoch = epoch
                state.sequence = lost.epoch == epoch ? max(state.sequence, sequence) : sequence
            }
            logger.info(
                check.missed
                    ? "shared tier: subscribed; invalidations may have been missed, local tiers reset"
                    : "shared tier: subscribed; nothing missed",
                metadata: ["sequence": "\(sequence)"])
            return
        }
    }

    var subscriberConnected: Bool { currentSubscriber?.isConnected ?? false }
}
