import Clocks
import NIOConcurrencyHelpers

/// One Sentinel's announcements of this group's failovers (`+promoted-slave`, `+switch-master`).
package final class RedisSentinelWatcher: Sendable {
    /// The Sentinel watched.
    public let sentinel: RedisEndpoint.Address
    /// Finishes when the Sentinel's connection ends (closed, or silent past the PINGs' deadline).
    public let switches: AsyncStream<RedisSentinelSwitch>
    private let subscription: RedisSubscription
    private let ended = NIOLockedValueBox<String?>(nil)

    /// `elapsed` paces the PINGs.
    init(sentinel: RedisEndpoint.Address, subscription: RedisSubscription, group: RedisSentinel, elapsed: Elapsed) {
        self.sentinel = sentinel
        self.subscription = subscription
        let (stream, continuation) = AsyncStream.makeStream(of: RedisSentinelSwitch.self)
        switches = stream
        let (masterName, logger, interval) = (group.masterName, group.logger, group.watchPingInterval)
        Task { [ended] in
            let reason = await withTaskGroup(of: String?.self) { tasks in
                tasks.addTask {
                    for await message in subscription.messages {
                        do throws(RedisError) {
                            guard let change = try RedisSentinelSwitch(
                                channel: message.channel, payload: message.payload, masterName: masterName)
                            else { continue }
                            continuation.yield(change)
                        } catch {
                            logger.warning("a Sentinel's announcement was refused", metadata: [
                                "sentinel": "\(sentinel)", "reason": "\(error)",
                            ])
                        }
                    }
                    return nil
                }
                tasks.addTask {
                    guard let failure = await subscription.keepAlive(every: interval, deadline: interval * 2, on: elapsed)
                    else {
                        return nil
                    }
                    if case .timeout = failure {
                        return "no reply to PING within \((interval * 2).shortDescription)"
                    }
                    return "PING failed: \(failure)"
                }
                let first = await tasks.next() ?? nil
                tasks.cancelAll()
                subscription.closeSoon()
                var reason = first
                for await other in tasks where reason == nil { reason = other }
                return reason
            }
            ended.withLockedValue { $0 = reason }
            continuation.finish()
        }
    }

    /// Why the watch ended, once `switches` has finished: the Sentinel's silence, or nil when its connection closed.
    package var endReason: String? { ended.withLockedValue { $0 } }

    public func close() async {
        await subscription.close()
    }

    /// `close()` for a caller that is not async.
    package func closeSoon() {
        subscription.closeSoon()
    }
}
