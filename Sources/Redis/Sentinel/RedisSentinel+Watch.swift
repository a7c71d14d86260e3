import Clocks
import Logging
import NIOConcurrencyHelpers

extension RedisSentinel {
    /// Failovers of this group as one Sentinel announces them, from the first Sentinel that accepts the
    /// subscription: `+promoted-slave` (the replica answers as the primary; from this moment the Sentinels name it)
    /// and `+switch-master` (the failover's end, once the other replicas are told; the same switch again, or the
    /// only one heard when the promotion was missed). The connection is PINGed every `watchPingInterval`; a PING
    /// unanswered for twice that (a Sentinel gone silent) ends it; `clock` paces the PINGs. The stream finishes when
    /// the connection ends: watch again (`follow` does).
    package func watch(clock: any Clock<Duration>) async throws(RedisError) -> RedisSentinelWatcher {
        try await watch(on: Elapsed(clock))
    }

    private func watch(on elapsed: Elapsed) async throws(RedisError) -> RedisSentinelWatcher {
        var lastError = RedisError.connectFailed("no Sentinel configured")
        for sentinel in order {
            do throws(RedisError) {
                let subscription = try await RedisSubscription.connect(
                    endpoint(of: sentinel), timeout: timeout, connectTimeout: timeout, eventLoopGroup: eventLoopGroup,
                    logger: logger)
                do throws(RedisError) {
                    try await subscription.subscribe(["+promoted-slave", "+switch-master"])
                } catch {
                    await subscription.close()
                    throw error
                }
                return RedisSentinelWatcher(sentinel: sentinel, subscription: subscription, group: self, elapsed: elapsed)
            } catch {
                lastError = error
            }
        }
        throw lastError
    }

    /// Follows this group's failovers until the calling task is cancelled: watches (`watch()`), watches again after a
    /// lost or refused watch with a back-off from 100 ms doubling to 5 s, and hands `onSwitch` at most one switch per
    /// `minimumSwitchInterval` (those announced sooner are coalesced: the latest is handed on once the interval has
    /// passed). An announcement naming a host that is neither a host name nor an address is refused, logged escaped.
    /// `clock` times the back-off, a watch's length and the switches' interval.
    public func follow(
        clock: any Clock<Duration>, _ onSwitch: @escaping @Sendable (RedisSentinelSwitch) -> Void
    ) async {
        let elapsed = Elapsed(clock)
        let throttle = SwitchThrottle(interval: minimumSwitchInterval, elapsed: elapsed, handOn: onSwitch)
        defer { throttle.close() }
        var backoff = Duration.milliseconds(100)
        // Logged once per outage: the first loss, and again only after a watch that lasted.
        var logged = false
        while !Task.isCancelled {
            let began = elapsed.now()
            do {
                let watcher = try await watch(on: elapsed)
                await withTaskCancellationHandler {
                    for await change in watcher.switches { throttle.offer(change) }
                } onCancel: {
                    watcher.closeSoon()
                }
                guard !Task.isCancelled else { return }
                if elapsed.now() - began >= .seconds(5) {
                    backoff = .milliseconds(100)
                    logged = false
                }
                if !logged {
                    logger.warning("Sentinel watch lost; watching again with back-off", metadata: [
                        "sentinel": "\(watcher.sentinel)", "reason": "\(watcher.endReason ?? "the connection closed")",
                    ])
                }
            } catch {
                if !logged {
                    logger.warning("no Sentinel accepts the failover watch; trying again with back-off", metadata: [
                        "group": "\(masterName)", "reason": "\(error)",
                    ])
                }
            }
            logged = true
            do { try await elapsed.sleep(for: backoff) } catch { return }
            backoff = min(backoff * 2, .seconds(5))
        }
    }
}
