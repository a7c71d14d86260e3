import Clocks
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// One subscriber connection (a `RedisSubscription`): SUBSCRIBE `channel`, then deliver messages.
///
/// One task owns the loop. When nothing arrived for `pingInterval` it sends PING; a PING unanswered for two
/// intervals, EOF or an I/O error count as a lost connection: it reports `.disconnected` once, then reconnects by
/// itself with a back-off from 100 ms doubling to 5 s, until `stop()`. Connect (TLS, AUTH) and SUBSCRIBE are each
/// bounded by `timeout`; once subscribed, the pings bound how long a silent connection goes unnoticed. `clock` (the
/// process's monotonic clock) paces the pings and the back-off.
public final class RedisSubscriber: Sendable {
    public enum Event: Sendable, Equatable {
        /// After every successful SUBSCRIBE confirmation (first connect and each reconnect).
        case subscribed
        /// The payload of a message published on the channel.
        case message([UInt8])
        /// The connection was lost or could not be made (reason without password). Reported once
        /// per loss: failed reconnect attempts that follow are not reported again.
        case disconnected(String)
    }

    public let endpoint: RedisEndpoint
    public let channel: String
    public let timeout: Duration
    package let pingInterval: Duration
    private let core: SubscriberCore

    /// Events are delivered by the subscriber's task, one at a time, in order.
    public init(
        endpoint: RedisEndpoint, channel: String, timeout: Duration, clock: any Clock<Duration>,
        pingInterval: Duration = .seconds(1), failures: RedisConnectFailures? = nil,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "unicache.redis"),
        subscribe: Subscribe? = nil,
        onEvent: @escaping @Sendable (Event) -> Void
    ) {
        self.endpoint = endpoint
        self.channel = channel
        self.timeout = timeout
        self.pingInterval = max(pingInterval, .milliseconds(10))
        core = SubscriberCore(
            endpoint: endpoint, channel: channel, timeout: max(timeout, .milliseconds(1)), elapsed: Elapsed(clock),
            pingInterval: self.pingInterval, failures: failures, eventLoopGroup: eventLoopGroup, logger: logger,
            subscribe: subscribe, onEvent: onEvent)
    }

    /// How a session gets its subscription when not by `SUBSCRIBE` on the endpoint's node: connected and subscribed
    /// to the channel (a cluster's sharded channel: `RedisClusterClient.shardedSubscription`).
    public typealias Subscribe = @Sendable () async throws(RedisError) -> RedisSubscription

    deinit {
        stop()
    }

    /// Starts the loop. Idempotent; does nothing after `stop()`.
    public func start() {
        core.start()
    }

    /// Stops the loop and closes the connection; returns at once, and no event is delivered after it returns.
    /// Idempotent; may be called from `onEvent`.
    public func stop() {
        core.stop()
    }

    /// Runs the loop until `stop()` or the calling task's cancellation (which stops it), and returns once it has
    /// ended (its connection closed): a service's `run`.
    public func run() async {
        start()
        await withTaskCancellationHandler { await waitUntilStopped() } onCancel: { stop() }
    }

    /// Returns once the loop has ended after `stop()` (its connection closed).
    package func waitUntilStopped() async {
        await core.loop?.value
    }

    /// Ends a back-off under way at once (the next one starts again from 100 ms): the caller knows the channel's
    /// node answers again (a cluster's map shows the shard's primary promoted), where waiting out a back-off grown to
    /// seconds would leave the channel deaf while others write. Does nothing while subscribed.
    public func retryNow() {
        core.retryNow()
    }

    /// Whether the subscription is confirmed and the connection not known to be lost (false
    /// once stop() was called).
    public var isConnected: Bool {
        core.state.withLockedValue { $0.connected && !$0.stopping }
    }
}

/// What the subscriber's task works with (it does not keep the `RedisSubscriber` alive, whose deinit stops it).
final class SubscriberCore: Sendable {
    struct State: Sendable {
        var connected = false
        var stopping = false
        var loop: Task<Void, Never>?
        /// The connection of the session under way, closed by `stop()`.
        var subscription: RedisSubscription?
        /// The back-off's sleep under way, cut short by `retryNow()` and `stop()`.
        var backoff: Task<Void, Never>?
        /// `retryNow()` came while no back-off was under way: the next one is skipped.
        var retrySoon = false
    }

    let endpoint: RedisEndpoint
    let channel: String
    let timeout: Duration
    /// Paces the pings and the back-off.
    let elapsed: Elapsed
    let pingInterval: Duration
    let failures: RedisConnectFailures?
    let eventLoopGroup: any EventLoopGroup
    let logger: Logger
    let subscribe: RedisSubscriber.Subscribe?
    let onEvent: @Sendable (RedisSubscriber.Event) -> Void
    let state = NIOLockedValueBox(State())

    static let initialBackoff = Duration.milliseconds(100)
    static let maxBackoff = Duration.seconds(5)

    init(
        endpoint: RedisEndpoint, channel: String, timeout: Duration, elapsed: Elapsed, pingInterval: Duration,
        failures: RedisConnectFailures?, eventLoopGroup: any EventLoopGroup, logger: Logger,
        subscribe: RedisSubscriber.Subscribe?, onEvent: @escaping @Sendable (RedisSubscriber.Event) -> Void
    ) {
        self.subscribe = subscribe
        self.endpoint = endpoint
        self.channel = channel
        self.timeout = timeout
        self.elapsed = elapsed
        self.pingInterval = pingInterval
        self.failures = failures
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
        self.onEvent = onEvent
    }

    var loop: Task<Void, Never>? { state.withLockedValue { $0.loop } }

    func start() {
        state.withLockedValue { state in
            guard state.loop == nil, !state.stopping else { return }
            state.loop = Task { [self] in await run() }
        }
    }

    func stop() {
        let (loop, subscription, backoff) = state.withLockedValue { state in
            state.stopping = true
            state.connected = false
            return (state.loop, state.subscription, state.backoff)
        }
        loop?.cancel()
        backoff?.cancel()
        subscription?.closeSoon()
    }

    func retryNow() {
        let backoff = state.withLockedValue { state -> Task<Void, Never>? in
            if state.backoff == nil, !state.connected { state.retrySoon = true }
            return state.backoff
        }
        backoff?.cancel()
    }

    /// Sleeps `duration` unless `retryNow()` (or `stop()`) ends it first; false when it was cut short.
    private func backOff(for duration: Duration) async -> Bool {
        let elapsed = self.elapsed
        let sleep = state.withLockedValue { state -> Task<Void, Never>? in
            guard !state.retrySoon, !state.stopping else {
                state.retrySoon = false
                return nil
            }
            // A task of its own, so that `retryNow()` can cancel the sleep without cancelling the loop.
            let sleep = Task { _ = try? await elapsed.sleep(for: duration) }
            state.backoff = sleep
            return sleep
        }
        guard let sleep else { return false }
        await sleep.value
        return state.withLockedValue { state in
            state.backoff = nil
            return !sleep.isCancelled
        }
    }

    private var isStopping: Bool { state.withLockedValue { $0.stopping } }

    /// Delivers an event unless stop() was called.
    func emit(_ event: RedisSubscriber.Event) {
        guard !isStopping else { return }
        onEvent(event)
    }

    private enum Outcome {
        case stopped
        case lost(String, wasSubscribed: Bool)
    }

    /// The loop: sessions with back-off between them until stopped.
    private func run() async {
        var backoff = Self.initialBackoff
        var reportedDown = false
        while !isStopping {
            let outcome = await session()
            state.withLockedValue {
                $0.connected = false
                $0.subscription = nil
            }
            guard case .lost(let reason, let wasSubscribed) = outcome else { return }
            if wasSubscribed {
                backoff = Self.initialBackoff
                reportedDown = false
            }
            if !reportedDown {
                emit(.disconnected(reason))
                reportedDown = true
            }
            let sleptOut = await backOff(for: backoff)
            if isStopping || Task.isCancelled { return }
            backoff = sleptOut ? min(backoff * 2, Self.maxBackoff) : Self.initialBackoff
        }
    }

    /// One connection: connect (TLS, AUTH), SUBSCRIBE, then receive until lost or stopped.
    private func session() async -> Outcome {
        if let subscribe { return await session(subscribe) }
        let subscription: RedisSubscription
        do throws(RedisError) {
            var address: RedisEndpoint.Address?
            // With Sentinel the primary is asked each time (a replica would hear the fleet too, but not for long).
            if let sentinel = RedisSentinel(endpoint, timeout: timeout, eventLoopGroup: eventLoopGroup, logger: logger) {
                address = try await sentinel.primaryAddress()
            }
            subscription = try await RedisSubscription.connect(
                endpoint, at: address, timeout: timeout, connectTimeout: timeout, eventLoopGroup: eventLoopGroup,
                logger: logger)
        } catch {
            failures?.record(error)
            return .lost(error.reason(connectingTo: endpoint, timeout: timeout), wasSubscribed: false)
        }
        guard await adopt(subscription) else { return .stopped }
        do throws(RedisError) {
            try await subscription.subscribe([channel])
        } catch {
            await subscription.close()
            if case .errorReply(let refused) = error {
                // A channel the user's ACL rules do not grant is a refusal like a wrong password: counted with them.
                failures?.record(error)
                let reason = "SUBSCRIBE on \(endpoint) as \(endpoint.user ?? "default") was refused: \(refused.summary)"
                if refused.isAuthenticationError {
                    logger.warning("Redis refused the invalidation channel", metadata: ["reason": "\(reason)"])
                }
                return .lost(reason, wasSubscribed: false)
            }
            return .lost("SUBSCRIBE on \(endpoint) failed: \(error)", wasSubscribed: false)
        }
        return await subscribed(subscription)
    }

    /// A session whose subscription `subscribe` makes.
    private func session(_ subscribe: RedisSubscriber.Subscribe) async -> Outcome {
        let subscription: RedisSubscription
        do throws(RedisError) {
            subscription = try await subscribe()
        } catch {
            failures?.record(error)
            return .lost("subscribing to \(channel.escapedForLog) failed: \(error)", wasSubscribed: false)
        }
        guard await adopt(subscription) else { return .stopped }
        return await subscribed(subscription)
    }

    /// Keeps `subscription` as the session's (which `stop()` closes); false, and closed, when stopping already.
    private func adopt(_ subscription: RedisSubscription) async -> Bool {
        let stopping = state.withLockedValue { state -> Bool in
            if !state.stopping { state.subscription = subscription }
            return state.stopping
        }
        if stopping { await subscription.close() }
        return !stopping
    }

    /// Subscribed: reported, then messages received until the connection is lost or the loop stopped.
    private func subscribed(_ subscription: RedisSubscription) async -> Outcome {
        state.withLockedValue { $0.connected = !$0.stopping }
        emit(.subscribed)
        let reason = await receive(subscription)
        await subscription.close()
        return isStopping ? .stopped : .lost(reason, wasSubscribed: true)
    }

    /// Delivers messages while a second child task keeps the connection checked with PINGs; returns why it ended,
    /// naming the node the subscription was on (a cluster's node or Sentinel's primary, not the seed or Sentinels).
    private func receive(_ subscription: RedisSubscription) async -> String {
        let (channel, pingInterval, elapsed) = (self.channel, self.pingInterval, self.elapsed)
        let endpoint = self.endpoint.node(at: subscription.address)
        return await withTaskGroup(of: String?.self) { group in
            group.addTask { [self] in
                for await message in subscription.messages where message.channel == channel {
                    emit(.message(message.payload))
                }
                return nil
            }
            group.addTask {
                let failure = await subscription.keepAlive(every: pingInterval, deadline: pingInterval * 2, on: elapsed)
                guard case .timeout? = failure else { return nil }
                return "no reply from \(endpoint) to PING within \((pingInterval * 2).shortDescription)"
            }
            // Whichever child ends first ends the session: the other is cancelled and the connection closed.
            var reason: String?
            if let first = await group.next() { reason = first }
            group.cancelAll()
            subscription.closeSoon()
            for await other in group where reason == nil { reason = other }
            return reason ?? "the connection to \(endpoint) was lost"
        }
    }
}
