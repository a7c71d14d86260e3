import Breaker
import Clocks
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A client of one Redis node: a few multiplexed connections on a NIO event loop group, on which commands from any
/// number of callers are pipelined and matched to their replies in order, so no Redis call ever holds a thread. A
/// cluster map holds one per primary; with a `redis-sentinel://` endpoint it follows the group's primary, which a
/// `RedisSentinelPrimary` beside it tells it.
///
/// Each connection is made lazily (by the first command that needs it: AUTH and SELECT included, bounded by
/// `timeout`), and dropped after a failure; the next command on its slot reconnects. A command that finds its
/// connection closed meanwhile (a Redis that restarted) runs once more on a new one. A ``CircuitBreaker``
/// (``CircuitBreaker/Configuration/redis``) guards the node: while it is open, commands fail at once without a
/// connect. A timed-out command closes its connection (a late reply is never matched to another command), failing
/// what was in flight on it.
public final class RedisNodeClient: Sendable {
    public let endpoint: RedisEndpoint
    public let timeout: Duration
    /// `timeout` as the event loop counts it, converted once.
    let commandTimeout: TimeAmount
    public let size: Int
    let slots: [ConnectionSlot]
    let state: NIOLockedValueBox<NodeState>
    /// The loops the connections run on.
    let eventLoopGroup: any EventLoopGroup
    /// A group the node client made for itself (`dedicatedEventLoop`), shut down with it.
    private let ownedGroup: MultiThreadedEventLoopGroup?
    let logger: Logger
    /// The node's address, unless a Sentinel group names it (`sentinelPrimary`).
    let home: RedisEndpoint.Address
    /// With `redis-sentinel://`: asked for the primary on every new connection, and telling each failover.
    let sentinelPrimary: RedisSentinelPrimary?
    /// The breaker's time: readings of the clock the node client was given.
    private let elapsed: Elapsed

    /// Refusals of its connects for their TLS and for their credentials (`WRONGPASS`, `NOAUTH`, `NOPERM`), and of its
    /// commands for the user's permissions, since the node client was made (CONTRACT §10.1, §10.2). A subscriber to
    /// the same Redis may count into it too.
    public let connectFailures = RedisConnectFailures()

    /// The node at `address` (default: the endpoint's; with `redis-sentinel://`, the group's primary). `timeout` bounds
    /// the connect (TLS, AUTH and SELECT included) and each command. `clock`: the process's monotonic clock, the
    /// breaker's time and the Sentinel watch's (its back-off and its throttle of switches). `size` connections.
    /// Connects lazily, so creating a node client never fails and never blocks. `dedicatedEventLoop`: the connections run on a thread of their own
    /// instead of `eventLoopGroup`, so that a reply is never queued behind other work of a shared loop (a busy HTTP
    /// client, TLS handshakes) past the command's deadline; that thread is scheduled as a batch thread
    /// (`preferBatchScheduling`).
    public init(
        endpoint: RedisEndpoint, address: RedisEndpoint.Address? = nil, timeout: Duration, clock: any Clock<Duration>,
        size: Int = 4,
        breaker: CircuitBreaker.Configuration = .redis,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton, dedicatedEventLoop: Bool = false,
        logger: Logger = Logger(label: "unicache.redis")
    ) {
        let shared = eventLoopGroup
        let owned = dedicatedEventLoop ? MultiThreadedEventLoopGroup(numberOfThreads: 1) : nil
        // The loop's first task, before any connection's.
        owned?.next().execute { Self.preferBatchScheduling() }
        ownedGroup = owned
        self.eventLoopGroup = owned ?? shared
        self.endpoint = endpoint
        self.timeout = timeout
        commandTimeout = TimeAmount(timeout)
        elapsed = Elapsed(clock)
        self.size = max(size, 1)
        slots = (0..<max(size, 1)).map { _ in ConnectionSlot() }
        state = NIOLockedValueBox(NodeState(breaker: CircuitBreaker(breaker)))
        self.logger = logger
        home = address ?? endpoint.address
        // The Sentinels' watch may outlive the node client by a moment (it is cancelled, not awaited): on the shared
        // loops.
        sentinelPrimary =
            address == nil
            ? RedisSentinel(endpoint, timeout: timeout, eventLoopGroup: shared, logger: logger).map {
                RedisSentinelPrimary($0, clock: clock)
            }
            : nil
    }

    /// Puts the calling thread under Linux's `SCHED_BATCH` policy: waking it never preempts the thread that woke
    /// it. An HTTP polling thread that hands commands to the loop goes on with its burst of requests until it
    /// waits, and the loop then writes them as one batch (`isCollecting`), instead of preempting it at the first
    /// command when both share a CPU and sending each on its own. A thread the loop thread starts inherits the
    /// policy (Linux resets only real-time policies on fork): libdispatch may start a cooperative-pool worker from
    /// it when a reply resumes a task; such a worker only loses wakeup preemption too. Best effort: elsewhere, or
    /// refused, nothing changes.
    static func preferBatchScheduling() {
        #if os(Linux)
        var parameters = sched_param()
        _ = sched_setscheduler(0, 3 /* SCHED_BATCH, <linux/sched.h>; Glibc's module does not export it */, &parameters)
        #endif
    }

    deinit {
        shutdown()
        // Only now, when no task of the node client (a connect, a command) can still schedule work on it; nothing
        // waits for the thread to end.
        ownedGroup?.shutdownGracefully { _ in }
    }

    /// One command. A reply of kind `.error` is returned, not thrown. Throws `.unavailable` when the command could
    /// not be run (its connection is then dropped), when the breaker is open (at once, without a connect) or after
    /// `shutdown()`; `.refused` instead when the credentials were refused.
    public func send(_ command: RedisCommand) async throws(RedisError) -> RedisReply {
        let replies = try await send([command])
        guard let reply = replies.first else { throw .unavailable("no reply") }
        return reply
    }

    /// Several commands sent in one round trip on one connection; their replies in order. Throws as `send` does
    /// (then none of the replies is known).
    public func send(_ commands: [RedisCommand]) async throws(RedisError) -> [RedisReply] {
        if commands.isEmpty { return [] }
        return try await withCheckedContinuation { continuation in
            submit(RedisCommandList(commands), .all { continuation.resume(returning: $0) })
        }.get()
    }

    /// One command whose reply (or failure) is handed to `reply` on the event loop that got it, without a task: for
    /// a caller that is not async (an HTTP thread answering from Redis). `reply` must not block; it is called once,
    /// at once on the calling thread when the command cannot be sent (breaker open, shut down).
    public func send(
        _ command: consuming RedisCommand, reply: @escaping @Sendable (Result<RedisReply, RedisError>) -> Void
    ) {
        submit(RedisCommandList(command), .one(reply))
    }

    /// `script` over `keys` and `arguments` by its digest (`EVALSHA`); sent once more with its text (`EVAL`) when
    /// Redis answers that it does not have it (`NOSCRIPT`: Redis restarted, or its script cache was flushed).
    public func evaluate(
        _ script: RedisScript, keys: [[UInt8]], arguments: [[UInt8]]
    ) async throws(RedisError) -> RedisReply {
        let reply = try await send(script.command(keys: keys, arguments: arguments))
        guard reply.errorReply?.kind == .noScript else { return reply }
        return try await send(script.command(keys: keys, arguments: arguments, loading: true))
    }

    /// False while the breaker is open or half-open (for /stats and /readyz), and after shutdown.
    public var isAvailable: Bool {
        state.withLockedValue { !$0.isShutDown && $0.breaker.isClosed }
    }

    /// The breaker's state now.
    package var breakerState: CircuitBreaker.State {
        let now = self.now
        return state.withLockedValue { $0.breaker.state(at: now) }
    }

    /// Why the latest command failed; nil when it succeeded. Never contains the password.
    public var lastError: String? {
        state.withLockedValue { $0.lastFailure?.reason }
    }

    /// How many times a connection was attempted (successful or not) since the node client was made.
    package var connectAttempts: Int {
        state.withLockedValue { $0.connectAttempts }
    }

    /// `host:port` of the node in use: the primary a Sentinel named last, else the node's (before any: the first
    /// Sentinel's).
    public var primary: String {
        (state.withLockedValue { $0.primary } ?? home).description
    }

    /// Primary switches followed since the node client was made (announced by a Sentinel, or a new primary found on
    /// reconnect).
    public var failovers: Int {
        state.withLockedValue { $0.failovers }
    }

    /// `handler` runs after each primary switch (the connections to the old one are closed by then).
    public func onPrimarySwitch(_ handler: @escaping @Sendable () -> Void) {
        state.withLockedValue { $0.switchHandlers.append(handler) }
    }

    /// Closes every connection; commands in flight, waiting and later fail with `.unavailable`. Idempotent, never
    /// blocks.
    public func shutdown() {
        let first = state.withLockedValue { state -> Bool in
            defer { state.isShutDown = true }
            return !state.isShutDown
        }
        guard first else { return }
        sentinelPrimary?.stop()
        for slot in slots { slot.shutDown() }
    }

    var now: Duration { elapsed.now() }

    /// Where a submission's replies go: a single command's reply, or every reply of a batch. Handed down as is to
    /// the connection's batch, so that a reply reaches its caller through one closure, not one adapter per layer (each
    /// was a context allocated on the caller's thread and freed on the loop's).
    enum Delivery: Sendable {
        case one(@Sendable (Result<RedisReply, RedisError>) -> Void)
        case all(@Sendable (Result<[RedisReply], RedisError>) -> Void)

        func callAsFunction(_ result: Result<RedisReplies, RedisError>) {
            switch self {
            case .all(let reply): reply(result.map(Array.init))
            case .one(let reply): reply(result.flatMap { $0.first.map { .success($0) } ?? .failure(.unavailable("no reply")) })
            }
        }
    }

    /// Sends `commands` as one pipeline on the next connection, unless the breaker refuses them or the node client is
    /// shut down; `finished` settles the breaker with the outcome.
    private func submit(_ commands: consuming RedisCommandList, _ delivery: consuming Delivery) {
        let admission = state.withLockedValue { state -> Result<Bool, RedisError> in
            if state.isShutDown { return .failure(.shutDown) }
            // A closed breaker passes every command: the clock is read only while it is open or half-open.
            if state.breaker.isClosed { return .success(false) }
            switch state.breaker.admit(at: now) {
            case .refused: return .failure(state.rejection)
            case .probe: return .success(true)
            case .pass: return .success(false)
            }
        }
        switch admission {
        case .failure(let failure): delivery(.failure(failure))
        case .success(let probe):
            let slot = chosenSlot()
            slot.began()
            attempt(Submission(commands: commands, slot: slot, probe: probe, delivery: delivery), mayRetry: true)
        }
    }

    /// Commands admitted on a slot, on their way to a connection, and where their replies go.
    struct Submission: Sendable {
        let commands: RedisCommandList
        let slot: ConnectionSlot
        /// Whether the breaker admitted them as its half-open probe.
        let probe: Bool
        let delivery: Delivery
    }

    /// The submission's outcome: the slot's count and the breaker settled, then the replies delivered.
    func finished(_ submission: Submission, _ result: Result<RedisReplies, RedisError>) {
        submission.slot.ended()
        switch result {
        case .success:
            state.withLockedValue { $0.succeeded() }
        case .failure(let failure):
            let now = self.now
            state.withLockedValue { state in
                state.lastFailure = failure
                state.breaker.failed(at: now, probe: submission.probe)
            }
        }
        submission.delivery(result)
    }

    /// A connection whose outbox waits for the event loop, so that the command shares their write and read
    /// (requests that arrive together, as a polling thread's burst, make one round trip); else the first with the
    /// fewest commands in flight: one connection under a light load, and a slow command (a SCAN, a long script)
    /// sends the others to the next.
    private func chosenSlot() -> ConnectionSlot {
        for slot in slots where slot.isJoinable { return slot }
        var slot = slots[0]
        for candidate in slots.dropFirst() where candidate.inFlight < slot.inFlight { slot = candidate }
        return slot
    }
}
