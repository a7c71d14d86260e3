import Breaker
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Synchronization

/// A few multiplexed RedisNIO connections on a NIO event loop group: commands from any number of callers are
/// pipelined on them and matched to their replies in order, so no Redis call ever holds a thread.
///
/// Each connection is made lazily (by the first command that needs it: AUTH and SELECT included, bounded by
/// `timeout`), and dropped after a failure; the next command on its slot reconnects. A command that finds its
/// connection closed meanwhile (a Redis that restarted) runs once more on a new one. A ``CircuitBreaker``
/// (``CircuitBreaker/Configuration/redis``) guards the pool: while it is open, commands fail at once without a
/// connect. A timed-out command closes its connection (RedisNIO: a late reply is never matched to another command),
/// failing what was in flight on it.
public final class RedisCommandPool: Sendable {
    public let endpoint: RedisEndpoint
    public let timeout: Duration
    public let size: Int
    private let slots: [ConnectionSlot]
    private let state: NIOLockedValueBox<PoolState>
    /// The loops the pool's connections run on.
    private let eventLoopGroup: any EventLoopGroup
    /// A group the pool made for itself (`dedicatedEventLoop`), shut down with the pool.
    private let ownedGroup: MultiThreadedEventLoopGroup?
    private let logger: Logger
    /// With `redis-sentinel://`: asked for the primary on every new connection, and heard for its failovers.
    private let sentinel: RedisSentinel?
    private let watcher = NIOLockedValueBox<Task<Void, Never>?>(nil)
    /// The breaker's time origin.
    private let origin = ContinuousClock.now

    /// `timeout` bounds the connect (TLS, AUTH and SELECT included) and each command. `size` connections.
    /// Connects lazily, so creating a pool never fails and never blocks. `dedicatedEventLoop`: the pool runs on a
    /// thread of its own instead of `eventLoopGroup`, so that a reply is never queued behind other work of a shared
    /// loop (a busy HTTP client, TLS handshakes) past the command's deadline; that thread is scheduled as a batch
    /// thread (`preferBatchScheduling`).
    public init(
        endpoint: RedisEndpoint, timeout: Duration, size: Int = 4, breaker: CircuitBreaker.Configuration = .redis,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton, dedicatedEventLoop: Bool = false,
        logger: Logger = Logger(label: "unicache.redis")
    ) {
        let shared = eventLoopGroup
        let owned = dedicatedEventLoop ? MultiThreadedEventLoopGroup(numberOfThreads: 1) : nil
        // The loop's first task, before any connection's.
        owned?.next().execute { Self.preferBatchScheduling() }
        let eventLoopGroup: any EventLoopGroup = owned ?? shared
        ownedGroup = owned
        self.endpoint = endpoint
        self.timeout = timeout
        self.size = max(size, 1)
        slots = (0..<max(size, 1)).map { _ in ConnectionSlot() }
        state = NIOLockedValueBox(PoolState(breaker: CircuitBreaker(breaker)))
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
        // The Sentinels' watcher may outlive the pool by a moment (it is cancelled, not awaited): on the shared loops.
        sentinel = endpoint.sentinelDiscovery(timeout: timeout, eventLoopGroup: shared, logger: logger)
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
        // Only now, when no task of the pool (a connect, a command) can still schedule work on it; nothing waits for
        // the thread to end.
        ownedGroup?.shutdownGracefully { _ in }
    }

    /// One command, binary safe. A reply of kind `.error` is returned, not thrown. Throws
    /// `.unavailable` when the command could not be run (its connection is then dropped), when the
    /// breaker is open (at once, without a connect) or after `shutdown()`.
    public func command(_ arguments: [[UInt8]]) async throws(RedisError) -> RedisReply {
        let replies = try await run([arguments])
        guard let reply = replies.first else { throw .unavailable("no reply") }
        return reply
    }

    /// One command of UTF-8 arguments.
    public func command(_ arguments: String...) async throws(RedisError) -> RedisReply {
        try await command(arguments.map { Array($0.utf8) })
    }

    /// One command of UTF-8 arguments.
    public func command(_ arguments: [String]) async throws(RedisError) -> RedisReply {
        try await command(arguments.map { Array($0.utf8) })
    }

    /// Several commands sent in one round trip on one connection; their replies in order. Throws
    /// `.unavailable` as `command` does (then none of the replies is known).
    public func pipeline(_ commands: [[[UInt8]]]) async throws(RedisError) -> [RedisReply] {
        if commands.isEmpty { return [] }
        return try await run(commands)
    }

    /// False while the breaker is open or half-open (for /stats and /readyz), and after shutdown.
    public var isAvailable: Bool {
        state.withLockedValue { !$0.isShutDown && $0.breaker.isClosed }
    }

    /// The breaker's state now.
    public var breakerState: CircuitBreaker.State {
        let now = self.now
        return state.withLockedValue { $0.breaker.state(at: now) }
    }

    /// Why the latest command failed; nil when it succeeded. Never contains the password.
    public var lastError: String? {
        state.withLockedValue { $0.lastFailure?.reason }
    }

    /// How many times a connection was attempted (successful or not) since the pool was created.
    public var connectAttempts: Int {
        state.withLockedValue { $0.connectAttempts }
    }

    /// Connects refused for their TLS (certificate not trusted, expired, wrong name, handshake) and for their
    /// credentials (`WRONGPASS`, `NOAUTH`, `NOPERM`), since the pool was created (CONTRACT §10.1, §10.2). A
    /// subscriber to the same Redis may count into it too.
    public let connectFailures = RedisConnectFailures()

    /// `host:port` of the node in use: the primary a Sentinel named last, else the endpoint's.
    public var primary: String {
        state.withLockedValue { $0.primary?.description } ?? endpoint.address
    }

    /// Primary switches followed since the pool was created (announced by a Sentinel, or a new primary found on
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
        watcher.withLockedValue { $0 }?.cancel()
        for slot in slots { slot.shutDown() }
    }

    /// One command whose reply (or failure) is handed to `reply` on the event loop that got it, without a task: for
    /// a caller that is not async (an HTTP thread answering from Redis). `reply` must not block; it is called once,
    /// at once on the calling thread when the command cannot be sent (breaker open, shut down).
    public func command(_ arguments: [[UInt8]], reply: @escaping @Sendable (Result<RedisReply, RedisError>) -> Void) {
        submit([arguments]) { result in
            reply(result.flatMap { $0.first.map { .success($0) } ?? .failure(.unavailable("no reply")) })
        }
    }

    private var now: Duration { origin.duration(to: .now) }

    private func run(_ commands: [[[UInt8]]]) async throws(RedisError) -> [RedisReply] {
        try await withCheckedContinuation { continuation in
            submit(commands) { continuation.resume(returning: $0) }
        }.get()
    }

    /// Sends `commands` as one pipeline on the next connection, unless the breaker refuses them or the pool is shut
    /// down; settles the breaker with the outcome.
    private func submit(_ commands: [[[UInt8]]], reply: @escaping @Sendable (Result<[RedisReply], RedisError>) -> Void) {
        let now = self.now
        let admission = state.withLockedValue { state -> Result<Bool, RedisError> in
            if state.isShutDown { return .failure(.unavailable("the Redis pool is shut down")) }
            switch state.breaker.admit(at: now) {
            case .refused: return .failure(state.rejection)
            case .probe: return .success(true)
            case .pass: return .success(false)
            }
        }
        let probe: Bool
        switch admission {
        case .failure(let failure): return reply(.failure(failure))
        case .success(let isProbe): probe = isProbe
        }
        // An empty command gets an error reply in its place (RESP has no empty command: Redis would not answer).
        let sent = commands.filter { !$0.isEmpty }.map { $0.map(RESPArgument.init(bytes:)) }
        guard !sent.isEmpty else { return reply(.success(commands.map { _ in .error("ERR empty command") })) }
        let blocking = commands.contains(where: Self.blocks)
        let slot = chosenSlot(blocking: blocking)
        slot.began(blocking: blocking)
        attempt(sent, on: slot, mayRetry: true) { [self] result in
            slot.ended(blocking: blocking)
            let now = self.now
            state.withLockedValue { state in
                switch result {
                case .success:
                    state.succeeded()
                case .failure(let failure):
                    state.lastFailure = failure
                    state.breaker.failed(at: now, probe: probe)
                }
            }
            reply(result.map { values -> [RedisReply] in
                var replies = values.makeIterator()
                return commands.map { command -> RedisReply in
                    command.isEmpty ? RedisReply.error("ERR empty command") : (replies.next() ?? RedisReply.null)
                }
            })
        }
    }

    /// A connection whose outbox waits for the event loop, so that the command shares their write and read
    /// (requests that arrive together, as a polling thread's burst, make one round trip), unless a blocking command
    /// is among them (what follows it on its connection waits for it) or this one blocks; else the first with the
    /// fewest commands in flight: one connection under a light load, and a slow command (a SCAN, a long script,
    /// a BLPOP) sends the others to the next.
    private func chosenSlot(blocking: Bool) -> ConnectionSlot {
        if !blocking, let collecting = slots.first(where: \.isJoinable) { return collecting }
        var slot = slots[0]
        for candidate in slots.dropFirst() where candidate.inFlight < slot.inFlight { slot = candidate }
        return slot
    }

    /// Commands Redis answers only when something happens (or a timeout passes): nothing may queue behind them.
    private static let blockingCommands: Set<String> = [
        "BLPOP", "BRPOP", "BRPOPLPUSH", "BLMOVE", "BLMPOP", "BZPOPMIN", "BZPOPMAX", "BZMPOP", "WAIT", "WAITAOF",
        "XREAD", "XREADGROUP",
    ]

    private static func blocks(_ command: [[UInt8]]) -> Bool {
        guard let name = command.first, (4...10).contains(name.count) else { return false }
        return blockingCommands.contains(String(decoding: name, as: UTF8.self).uppercased())
    }

    /// Sends on the slot's connection (connecting first when it has none). A reused connection that turns out closed
    /// (not timed out) is dropped and the commands go once more on a new one: every command we send may be repeated.
    private func attempt(
        _ commands: [[RESPArgument]], on slot: ConnectionSlot, mayRetry: Bool,
        _ done: @escaping @Sendable (Result<[RedisReply], RedisError>) -> Void
    ) {
        obtain(slot) { [self] obtained in
            let connection: RedisConnection
            let fresh: Bool
            switch obtained {
            case .failure(let failure): return done(.failure(failure))
            case .success(let ready): (connection, fresh) = ready
            }
            connection.enqueue(commands, timeout: timeout) { [self] result in
                switch result {
                case .success(let values):
                    // A demoted primary (CONTRACT §10.3): the next command asks the Sentinels again.
                    if sentinel != nil, values.contains(where: { $0.serverError?.kind == .readOnly }) {
                        slot.drop(connection)
                    }
                    if let refused = values.lazy.compactMap(\.serverError).first(where: \.isAuthenticationError) {
                        refusedReply(refused, to: commands)
                    }
                    done(.success(values.map(RedisReply.init)))
                case .failure(let failure):
                    slot.drop(connection)
                    if mayRetry, !fresh, failure == .connectionClosed {
                        attempt(commands, on: slot, mayRetry: false, done)
                    } else {
                        done(.failure(.unavailable(endpoint.reason(failure, timeout: timeout))))
                    }
                }
            }
        }
    }

    /// The slot's connection, or a new one (one connect per slot at a time: the commands that need the slot
    /// meanwhile wait for it). `fresh`: made for these commands, so a failure on it is not retried.
    private func obtain(
        _ slot: ConnectionSlot,
        _ ready: @escaping @Sendable (Result<(RedisConnection, fresh: Bool), RedisError>) -> Void
    ) {
        switch slot.take(ready) {
        case .use(let connection): ready(.success((connection, false)))
        case .wait: break
        case .refuse: ready(.failure(.unavailable("the Redis pool is shut down")))
        case .connect:
            state.withLockedValue { $0.connectAttempts += 1 }
            // The one task of a connect (TLS and the handshake are async); commands themselves run on futures.
            Task { [self] in
                do {
                    slot.connected(try await connect())
                } catch {
                    slot.failed(connectFailure(error))
                }
            }
        }
    }

    /// A new connection: to the endpoint, or to the primary the Sentinels name (checked with `ROLE`).
    private func connect() async throws -> RedisConnection {
        guard let sentinel else {
            return try await RedisConnection.connect(
                endpoint.connection(timeout: timeout), eventLoopGroup: eventLoopGroup, logger: logger)
        }
        watchFailovers(sentinel)
        let (endpoint, timeout) = (self.endpoint, self.timeout)
        let connection = try await sentinel.connectToPrimary { endpoint.connection(timeout: timeout, at: $0) }
        primaryIs(RedisURL.Address(host: connection.configuration.host, port: connection.configuration.port), announced: false)
        return connection
    }

    /// Follows the failovers the Sentinels announce (`RedisSentinel.follow`: a watch kept checked with PINGs, watched
    /// again with back-off, at most one switch a second).
    private func watchFailovers(_ sentinel: RedisSentinel) {
        watcher.withLockedValue { task in
            guard task == nil, !state.withLockedValue({ $0.isShutDown }) else { return }
            task = Task { [weak self] in
                await sentinel.follow { [weak self] change in self?.primaryIs(change.new, announced: true) }
            }
        }
    }

    /// The primary is `address` now. A change is a failover followed: counted, the connections to the old primary
    /// closed, the switch handlers told; one Sentinel announced closes the breaker too (the new primary is up, so
    /// fleet writes need not wait out a back-off earned while the old one was dying).
    private func primaryIs(_ address: RedisURL.Address, announced: Bool) {
        let handlers = state.withLockedValue { state -> [@Sendable () -> Void]? in
            defer { state.primary = address }
            guard let old = state.primary, old != address else { return nil }
            state.failovers += 1
            if announced { state.succeeded() }
            return state.switchHandlers
        }
        guard let handlers else { return }
        logger.info("Redis primary switched", metadata: ["primary": "\(address)", "group": "\(sentinel?.masterName ?? "")"])
        for slot in slots { slot.dropConnection(unlessAt: address) }
        for handler in handlers { handler() }
    }

    /// Why a connect failed, counted by kind and logged once per back-off (the first failure after a success,
    /// then each probe's). A refused AUTH (`WRONGPASS`, `NOAUTH`, `NOPERM`) is `.refused`, naming the user.
    private func connectFailure(_ error: any Error) -> RedisError {
        let reason = endpoint.reason(connecting: error, timeout: timeout)
        connectFailures.record(error)
        let shouldLog = state.withLockedValue { state -> Bool in
            defer { state.loggedFailure = true }
            return !state.loggedFailure || !state.breaker.isClosed
        }
        if shouldLog { logger.warning("Redis connect failed", metadata: ["reason": "\(reason)"]) }
        if let refused = error as? RedisServerError, refused.isAuthenticationError { return .refused(reason) }
        return .unavailable(reason)
    }

    /// A command Redis refused for the user's credentials or ACL rules (the connection itself is fine): counted with
    /// the refused connects, and logged at most once per the breaker's longest back-off, naming the user.
    private func refusedReply(_ refused: RedisServerError, to commands: [[RESPArgument]]) {
        connectFailures.recordRefusal()
        let now = self.now
        let shouldLog = state.withLockedValue { state -> Bool in
            if let last = state.loggedRefusal, now - last < state.breaker.configuration.maximumBackoff { return false }
            state.loggedRefusal = now
            return true
        }
        guard shouldLog else { return }
        let names = commands.compactMap { $0.first.map { String(decoding: $0.bytes, as: UTF8.self).uppercased() } }
        logger.warning("Redis refused a command for the user's permissions", metadata: [
            "user": "\(endpoint.user ?? "default")", "redis": "\(endpoint)",
            "commands": "\(Set(names).sorted().joined(separator: ","))", "error": "\(refused)",
        ])
    }
}

struct PoolState: Sendable {
    var breaker: CircuitBreaker
    /// Why the latest command failed; nil when it succeeded.
    var lastFailure: RedisError?
    var isShutDown = false
    var connectAttempts = 0
    /// The primary in use (Sentinel), and how many times it changed.
    var primary: RedisURL.Address?
    var failovers = 0
    var switchHandlers: [@Sendable () -> Void] = []
    /// A connect failure was logged since the last success (the next is logged only by a probe).
    var loggedFailure = false
    /// When a command refused for the user's permissions was last logged (the pool's time).
    var loggedRefusal: Duration?

    /// Why a command is refused while the breaker is open: `.refused` when the last failure was a refusal.
    var rejection: RedisError {
        let reason = "circuit breaker open" + (lastFailure.map { " after: \($0.reason)" } ?? "")
        if case .refused? = lastFailure { return .refused(reason) }
        return .unavailable(reason)
    }

    mutating func succeeded() {
        lastFailure = nil
        loggedFailure = false
        breaker.succeeded()
    }
}

/// One of the pool's connections: none yet, being made (with the commands waiting for it), or made.
final class ConnectionSlot: Sendable {
    typealias Waiter = @Sendable (Result<(RedisConnection, fresh: Bool), RedisError>) -> Void

    private enum State {
        case idle
        case connecting([Waiter])
        case connected(RedisConnection)
        case shutDown
    }

    enum Take {
        case use(RedisConnection)
        /// A connect is under way; the waiter is called when it ends.
        case wait
        /// Nobody is connecting: the caller connects, and its waiter is the first called.
        case connect
        case refuse
    }

    private let state = NIOLockedValueBox(State.idle)
    /// Commands sent on the slot and not answered yet (the pool picks the slot with the fewest).
    private let commandsInFlight = Atomic<Int>(0)

    var inFlight: Int { commandsInFlight.load(ordering: .relaxed) }
    /// Blocking commands (BLPOP, WAIT, …) among those in flight: while there is one, nothing joins the slot's batch.
    private let blockingInFlight = Atomic<Int>(0)

    /// Whether a command may join the slot's batch: its connection holds commands that wait for the event loop to
    /// write them, none of them blocking.
    var isJoinable: Bool {
        guard blockingInFlight.load(ordering: .relaxed) == 0 else { return false }
        return state.withLockedValue { state in
            guard case .connected(let connection) = state else { return false }
            return connection.isCollecting
        }
    }

    func began(blocking: Bool) {
        if blocking { blockingInFlight.wrappingAdd(1, ordering: .relaxed) }
        commandsInFlight.wrappingAdd(1, ordering: .relaxed)
    }

    func ended(blocking: Bool) {
        commandsInFlight.wrappingSubtract(1, ordering: .relaxed)
        if blocking { blockingInFlight.wrappingSubtract(1, ordering: .relaxed) }
    }

    func take(_ waiter: @escaping Waiter) -> Take {
        state.withLockedValue { state -> Take in
            switch state {
            case .connected(let connection) where connection.isActive:
                return .use(connection)
            case .connecting(var waiters):
                // Appended in place (the state let go of the array first), not copied for every waiter.
                state = .connecting([])
                waiters.append(waiter)
                state = .connecting(waiters)
                return .wait
            case .idle, .connected:
                state = .connecting([waiter])
                return .connect
            case .shutDown:
                return .refuse
            }
        }
    }

    func connected(_ connection: RedisConnection) {
        let waiters = state.withLockedValue { state -> [Waiter]? in
            guard case .connecting(let waiters) = state else { return nil }
            state = .connected(connection)
            return waiters
        }
        guard let waiters else {
            // Shut down meanwhile.
            connection.closeSoon()
            return
        }
        for waiter in waiters { waiter(.success((connection, true))) }
    }

    func failed(_ failure: RedisError) {
        let waiters = state.withLockedValue { state -> [Waiter] in
            guard case .connecting(let waiters) = state else { return [] }
            state = .idle
            return waiters
        }
        for waiter in waiters { waiter(.failure(failure)) }
    }

    /// Forgets `connection` after a failure on it (closed by RedisNIO already when it timed out), unless the slot
    /// moved on meanwhile.
    func drop(_ connection: RedisConnection) {
        let current = state.withLockedValue { state -> Bool in
            guard case .connected(let held) = state, held === connection else { return false }
            state = .idle
            return true
        }
        if current { connection.closeSoon() }
    }

    /// Closes the slot's connection unless it goes to `address` (a failover: the old primary's connections go).
    func dropConnection(unlessAt address: RedisURL.Address) {
        let dropped = state.withLockedValue { state -> RedisConnection? in
            guard case .connected(let connection) = state,
                connection.configuration.host != address.host || connection.configuration.port != address.port
            else { return nil }
            state = .idle
            return connection
        }
        dropped?.closeSoon()
    }

    func shutDown() {
        let (connection, waiters) = state.withLockedValue { state -> (RedisConnection?, [Waiter]) in
            defer { state = .shutDown }
            switch state {
            case .connected(let connection): return (connection, [])
            case .connecting(let waiters): return (nil, waiters)
            case .idle, .shutDown: return (nil, [])
            }
        }
        connection?.closeSoon()
        for waiter in waiters { waiter(.failure(.unavailable("the Redis pool is shut down"))) }
    }
}

extension RedisReply {
    init(_ value: RESPValue) {
        switch value {
        case .simpleString(let text): self = .status(text)
        case .error(let error): self = .error(error.message)
        case .integer(let number): self = .integer(Int(truncatingIfNeeded: number))
        case .bulkString(let bytes): self = .string(bytes)
        case .array(let elements): self = .array(elements.map(RedisReply.init))
        case .null: self = .null
        }
    }
}
