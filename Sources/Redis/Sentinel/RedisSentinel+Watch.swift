import Logging
import NIOConcurrencyHelpers

extension RedisSentinel {
    /// Failovers of this group as one Sentinel announces them, from the first Sentinel that accepts the
    /// subscription: `+promoted-slave` (the replica answers as the primary; from this moment the Sentinels name it)
    /// and `+switch-master` (the failover's end, once the other replicas are told; the same switch again, or the
    /// only one heard when the promotion was missed). The connection is PINGed every `watchPingInterval`; a PING
    /// unanswered for twice that (a Sentinel gone silent) ends it. The stream finishes when the connection ends:
    /// watch again (`follow` does).
    public func watch() async throws -> RedisSentinelWatcher {
        var lastError: any Error = RedisNIOError.connectFailed("no Sentinel configured")
        for sentinel in order {
            do {
                let subscription = try await RedisSubscription.connect(
                    configuration(sentinel), eventLoopGroup: eventLoopGroup, logger: logger)
                do {
                    try await subscription.subscribe(["+promoted-slave", "+switch-master"])
                } catch {
                    await subscription.close()
                    throw error
                }
                return RedisSentinelWatcher(sentinel: sentinel, subscription: subscription, group: self)
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
    public func follow(_ onSwitch: @escaping @Sendable (RedisSentinelSwitch) -> Void) async {
        let throttle = SwitchThrottle(interval: minimumSwitchInterval, handOn: onSwitch)
        defer { throttle.close() }
        var backoff = Duration.milliseconds(100)
        // Logged once per outage: the first loss, and again only after a watch that lasted.
        var logged = false
        while !Task.isCancelled {
            let began = ContinuousClock.now
            do {
                let watcher = try await watch()
                await withTaskCancellationHandler {
                    for await change in watcher.switches { throttle.offer(change) }
                } onCancel: {
                    watcher.closeSoon()
                }
                guard !Task.isCancelled else { return }
                if began.duration(to: .now) >= .seconds(5) {
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
            do { try await Task.sleep(for: backoff) } catch { return }
            backoff = min(backoff * 2, .seconds(5))
        }
    }
}

/// One Sentinel's announcements of this group's failovers (`+promoted-slave`, `+switch-master`).
public final class RedisSentinelWatcher: Sendable {
    /// The Sentinel watched.
    public let sentinel: RedisURL.Address
    /// Finishes when the Sentinel's connection ends (closed, or silent past the PINGs' deadline).
    public let switches: AsyncStream<RedisSentinelSwitch>
    private let subscription: RedisSubscription
    private let ended = NIOLockedValueBox<String?>(nil)

    init(sentinel: RedisURL.Address, subscription: RedisSubscription, group: RedisSentinel) {
        self.sentinel = sentinel
        self.subscription = subscription
        let (stream, continuation) = AsyncStream.makeStream(of: RedisSentinelSwitch.self)
        switches = stream
        let (masterName, logger, interval) = (group.masterName, group.logger, group.watchPingInterval)
        Task { [ended] in
            let reason = await withTaskGroup(of: String?.self) { tasks in
                tasks.addTask {
                    for await message in subscription.messages {
                        do throws(RedisNIOError) {
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
                    guard let failure = await subscription.keepAlive(every: interval, deadline: interval * 2) else {
                        return nil
                    }
                    if case RedisNIOError.timeout = failure {
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
    public var endReason: String? { ended.withLockedValue { $0 } }

    public func close() async {
        await subscription.close()
    }

    /// `close()` for a caller that is not async.
    public func closeSoon() {
        subscription.closeSoon()
    }
}

/// At most one switch handed on per `interval`: the first at once; those announced sooner are coalesced into the
/// latest, handed on when the interval since the last one has passed. Sixty `+switch-master` in a burst make two
/// switches, not sixty.
final class SwitchThrottle: Sendable {
    private struct State {
        var last: ContinuousClock.Instant?
        var pending: RedisSentinelSwitch?
        var timer: Task<Void, Never>?
        var closed = false
    }

    private let interval: Duration
    private let handOn: @Sendable (RedisSentinelSwitch) -> Void
    private let state = NIOLockedValueBox(State())

    init(interval: Duration, handOn: @escaping @Sendable (RedisSentinelSwitch) -> Void) {
        self.interval = interval
        self.handOn = handOn
    }

    func offer(_ change: RedisSentinelSwitch) {
        let now = ContinuousClock.now
        let handNow = state.withLockedValue { state -> Bool in
            guard !state.closed else { return false }
            guard let last = state.last, now < last + interval else {
                state.last = now
                state.pending = nil
                return true
            }
            state.pending = change
            if state.timer == nil {
                state.timer = Task { [self] in
                    try? await Task.sleep(until: last + interval, clock: .continuous)
                    flush()
                }
            }
            return false
        }
        if handNow { handOn(change) }
    }

    /// Hands on the switch waiting, if any.
    private func flush() {
        let change = state.withLockedValue { state -> RedisSentinelSwitch? in
            state.timer = nil
            guard !state.closed, let pending = state.pending else { return nil }
            state.pending = nil
            state.last = .now
            return pending
        }
        if let change { handOn(change) }
    }

    /// Nothing more is handed on (a hand-off under way may still finish).
    func close() {
        let timer = state.withLockedValue { state -> Task<Void, Never>? in
            state.closed = true
            return state.timer
        }
        timer?.cancel()
    }
}
