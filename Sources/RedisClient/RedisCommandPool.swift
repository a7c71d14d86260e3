import Breaker

/// A small pool of blocking hiredis contexts, each owned by its own thread, so no Redis call ever
/// runs on the caller's thread: callers suspend until their reply.
///
/// Commands wait in one queue; whichever worker thread is free takes the next. Each worker has one
/// context, connected lazily (on its first command) and discarded after any failure; the next
/// command on that worker reconnects (AUTH and SELECT included). A ``CircuitBreaker`` (``CircuitBreaker/Configuration/redis``) guards the
/// pool: while it is open, commands fail at once without reaching a thread.
public final class RedisCommandPool: Sendable {
    public let endpoint: RedisEndpoint
    public let timeout: Duration
    public let size: Int
    private let shared: PoolShared

    /// `timeout` bounds the connect and each command (each read and write). `size` contexts.
    /// Connects lazily, so creating a pool never fails and never blocks.
    public init(
        endpoint: RedisEndpoint, timeout: Duration, size: Int = 4,
        breaker: CircuitBreaker.Configuration = .redis
    ) {
        self.endpoint = endpoint
        self.timeout = timeout
        self.size = max(size, 1)
        shared = PoolShared(endpoint: endpoint, timeout: timeout, breaker: CircuitBreaker(breaker))
    }

    deinit {
        shutdown()
    }

    /// One command, binary safe. A reply of kind `.error` is returned, not thrown. Throws
    /// `.unavailable` when the command could not be run (the context is then discarded), when the
    /// breaker is open (at once, without touching a thread) or after `shutdown()`.
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

    /// Several commands sent in one round trip on one context; their replies in order. Throws
    /// `.unavailable` as `command` does (then none of the replies is known).
    public func pipeline(_ commands: [[[UInt8]]]) async throws(RedisError) -> [RedisReply] {
        if commands.isEmpty { return [] }
        return try await run(commands)
    }

    /// False while the breaker is open or half-open (for /stats and /readyz), and after shutdown.
    public var isAvailable: Bool {
        shared.state.withLock { !$0.isShutDown && $0.breaker.isClosed }
    }

    /// The breaker's state now.
    public var breakerState: CircuitBreaker.State {
        let now = shared.now
        return shared.state.withLock { $0.breaker.state(at: now) }
    }

    /// Why the latest command failed; nil when it succeeded. Never contains the password.
    public var lastError: String? {
        shared.state.withLock { $0.lastError }
    }

    /// How many times a worker tried to connect (successful or not) since the pool was created.
    public var connectAttempts: Int {
        shared.state.withLock { $0.connectAttempts }
    }

    /// Closes every context and joins the worker threads (a command in flight finishes first,
    /// bounded by `timeout`); queued and later commands throw `.unavailable`. Idempotent.
    public func shutdown() {
        let (first, jobs, threads) = shared.state.withLock { state -> (Bool, [PoolJob], [JoinableThread]) in
            guard !state.isShutDown else { return (false, [], []) }
            state.isShutDown = true
            defer {
                state.jobs.removeAll()
                state.threads.removeAll()
            }
            return (true, state.jobs, state.threads)
        }
        guard first else {
            // Another caller is joining the threads: return once it has.
            shared.state.withLock(waitingUntil: { $0.threadsJoined }) { _ in }
            return
        }
        shared.state.broadcast()
        for job in jobs {
            job.reply(.failure(.unavailable("the Redis pool is shut down")))
        }
        for thread in threads {
            thread.join()
        }
        shared.state.withLock { $0.threadsJoined = true }
        shared.state.broadcast()
    }

    /// One command whose reply (or failure) is handed to `reply` on the worker thread that ran it, without a task:
    /// for a caller that is not async (an HTTP thread answering from Redis). `reply` must not block; it is called
    /// once, at once on the calling thread when the command cannot be queued (breaker open, shut down).
    public func command(_ arguments: [[UInt8]], reply: @escaping @Sendable (Result<RedisReply, RedisError>) -> Void) {
        submit([arguments]) { result in
            reply(result.flatMap { $0.first.map { .success($0) } ?? .failure(.unavailable("no reply")) })
        }
    }

    private func run(_ commands: [[[UInt8]]]) async throws(RedisError) -> [RedisReply] {
        try await withCheckedContinuation { continuation in
            submit(commands) { continuation.resume(returning: $0) }
        }.get()
    }

    /// Queues `commands` as one job, unless the breaker refuses them or the pool is shut down.
    private func submit(_ commands: [[[UInt8]]], reply: @escaping @Sendable (Result<[RedisReply], RedisError>) -> Void) {
        let now = shared.now
        let admission = shared.state.withLock { state -> Result<Bool, RedisError> in
            if state.isShutDown { return .failure(.unavailable("the Redis pool is shut down")) }
            switch state.breaker.admit(at: now) {
            case .refused: return .failure(.unavailable(state.rejection))
            case .probe: return .success(true)
            case .pass: return .success(false)
            }
        }
        switch admission {
        case .failure(let failure):
            reply(.failure(failure))
        case .success(let isProbe):
            if let failure = shared.enqueue(PoolJob(commands: commands, isProbe: isProbe, reply: reply), workers: size) {
                reply(.failure(failure))
            }
        }
    }
}

/// A command (or pipeline) waiting for a worker, with where its result goes.
struct PoolJob: Sendable {
    let commands: [[[UInt8]]]
    var isProbe: Bool
    let reply: @Sendable (Result<[RedisReply], RedisError>) -> Void
}

struct PoolState: Sendable {
    var breaker: CircuitBreaker
    var jobs: [PoolJob] = []
    var lastError: String?
    var isShutDown = false
    var threadsJoined = false
    var threads: [JoinableThread] = []
    var connectAttempts = 0

    /// Why a command is refused while the breaker is open.
    var rejection: String {
        "circuit breaker open" + (lastError.map { " (last error: \($0))" } ?? "")
    }
}

/// What the pool and its worker threads share (the threads do not keep the pool alive).
final class PoolShared: Sendable {
    let endpoint: RedisEndpoint
    let timeout: Duration
    let state: Locked<PoolState>
    /// The breaker's time origin.
    private let origin = ContinuousClock.now

    /// The breaker's time: since the pool was made.
    var now: Duration { origin.duration(to: .now) }

    init(endpoint: RedisEndpoint, timeout: Duration, breaker: CircuitBreaker) {
        self.endpoint = endpoint
        self.timeout = timeout
        state = Locked(PoolState(breaker: breaker))
    }

    /// Queues `job`, starting the worker threads on first use. Returns the failure to resume the job
    /// with when it could not be queued (the job is then not queued).
    ///
    /// A worker is woken only for a job that finds the queue empty: jobs queued behind it go with the batch of the
    /// worker woken for it (which wakes another when it leaves some behind), so that under load one wake-up and
    /// one round trip serve many commands instead of each command waking a worker of its own.
    func enqueue(_ job: PoolJob, workers: Int) -> RedisError? {
        var wake = false
        let failure = state.withLock { state -> RedisError? in
            if state.isShutDown {
                return .unavailable("the Redis pool is shut down")
            }
            if state.threads.isEmpty {
                for _ in 0..<workers {
                    switch JoinableThread.start(name: "redis-worker", { [self] in workerLoop() }) {
                    case .success(let thread): state.threads.append(thread)
                    case .failure(let error): state.lastError = error.message
                    }
                }
                if state.threads.isEmpty {
                    // Counts as a failure, and must settle a probe (or the breaker stays half-open).
                    state.breaker.failed(at: now, probe: job.isProbe)
                    return .unavailable(state.lastError ?? "cannot start a thread")
                }
            }
            wake = state.jobs.isEmpty
            state.jobs.append(job)
            return nil
        }
        if wake { state.signal() }
        return failure
    }

    private enum Step {
        case exit
        case reject(PoolJob, String)
        case run([PoolJob])
    }

    /// The most queued jobs a worker sends in one round trip.
    static let batchLimit = 64

    /// A worker thread: takes jobs until shutdown, owning one context. While the breaker is closed, the jobs
    /// waiting when it takes one go with it as one pipeline (one write and one read for all of them, as a client
    /// that pipelines would send them): under load the round trips and thread wake-ups are shared. A probe goes
    /// alone, so that its outcome is its own.
    private func workerLoop() {
        JoinableThread.preferBatchScheduling()
        var context: HiredisContext?
        while true {
            var jobsLeft = false
            let step = state.withLock(waitingUntil: { $0.isShutDown || !$0.jobs.isEmpty }) { state -> Step in
                if state.isShutDown { return .exit }
                defer { jobsLeft = !state.jobs.isEmpty }
                var job = state.jobs.removeFirst()
                // The breaker may have opened while the job waited: then it fails without a connect.
                if !job.isProbe {
                    switch state.breaker.admit(at: now) {
                    case .refused: return .reject(job, state.rejection)
                    case .probe: job.isProbe = true
                    case .pass: break
                    }
                }
                guard !job.isProbe, state.breaker.isClosed else { return .run([job]) }
                let taken = min(state.jobs.prefix { !$0.isProbe }.count, Self.batchLimit - 1)
                let batch = [job] + state.jobs.prefix(taken)
                state.jobs.removeFirst(taken)
                return .run(batch)
            }
            // Jobs queued behind this worker's batch woke nobody: the next worker takes them.
            if jobsLeft { state.signal() }
            switch step {
            case .exit:
                return
            case .reject(let job, let reason):
                job.reply(.failure(.unavailable(reason)))
            case .run(let batch):
                var attemptedConnect = false
                let result = execute(batch.flatMap(\.commands), on: &context, attemptedConnect: &attemptedConnect)
                state.withLock { state in
                    if attemptedConnect { state.connectAttempts += 1 }
                    switch result {
                    case .success:
                        state.lastError = nil
                        state.breaker.succeeded()
                    case .failure(.unavailable(let reason)):
                        // Each command that failed counts, as when they went one by one.
                        state.lastError = reason
                        for job in batch { state.breaker.failed(at: now, probe: job.isProbe) }
                    }
                }
                switch result {
                case .success(let replies):
                    var next = replies.startIndex
                    for job in batch {
                        let end = next + job.commands.count
                        job.reply(.success(Array(replies[next..<end])))
                        next = end
                    }
                case .failure(let failure):
                    for job in batch { job.reply(.failure(failure)) }
                }
            }
        }
    }

    /// Runs commands on `context` (connecting first if there is none); drops the context on failure. A context
    /// that sat idle may have been closed by a Redis that restarted meanwhile: when a reused context fails other
    /// than by a timeout, the commands run once more on a new connection (every command we send may be repeated).
    private func execute(
        _ commands: [[[UInt8]]], on context: inout HiredisContext?, attemptedConnect: inout Bool
    ) -> Result<[RedisReply], RedisError> {
        let reused = context != nil
        var timedOut = false
        let result = executeOnce(commands, on: &context, attemptedConnect: &attemptedConnect, timedOut: &timedOut)
        if case .failure = result, reused, !timedOut, context == nil {
            return executeOnce(commands, on: &context, attemptedConnect: &attemptedConnect, timedOut: &timedOut)
        }
        return result
    }

    private func executeOnce(
        _ commands: [[[UInt8]]], on context: inout HiredisContext?, attemptedConnect: inout Bool, timedOut: inout Bool
    ) -> Result<[RedisReply], RedisError> {
        if context == nil {
            attemptedConnect = true
            switch connect() {
            case .success(let connected): context = connected
            case .failure(let error): return .failure(error)
            }
        }
        guard let connection = context else { return .failure(.unavailable("no connection")) }
        for command in commands where !command.isEmpty {
            guard connection.append(command) else {
                timedOut = connection.failure(timeout: timeout)?.timedOut ?? false
                context = nil
                return .failure(.unavailable("cannot queue a command: \(failureText(connection))"))
            }
        }
        var replies: [RedisReply] = []
        replies.reserveCapacity(commands.count)
        for command in commands {
            if command.isEmpty {
                replies.append(.error("ERR empty command"))
                continue
            }
            guard let reply = connection.nextReply() else {
                timedOut = connection.failure(timeout: timeout)?.timedOut ?? false
                context = nil
                return .failure(.unavailable("command on \(endpoint) failed: \(failureText(connection))"))
            }
            replies.append(reply)
        }
        return .success(replies)
    }

    /// Connects, authenticates and selects the database.
    private func connect() -> Result<HiredisContext, RedisError> {
        let context: HiredisContext
        switch HiredisContext.connectBlocking(host: endpoint.host, port: endpoint.port, timeout: timeout) {
        case .success(let connected): context = connected
        case .failure(let failure): return .failure(.unavailable("cannot connect to \(endpoint): \(failure.message)"))
        }
        if let auth = endpoint.authArguments {
            if let failure = setUp(context, auth, step: "AUTH") { return .failure(.unavailable(failure)) }
        }
        if endpoint.database != 0 {
            if let failure = setUp(context, ["SELECT", String(endpoint.database)], step: "SELECT \(endpoint.database)") {
                return .failure(.unavailable(failure))
            }
        }
        return .success(context)
    }

    /// Runs a set-up command that must answer +OK; returns why it did not. `step` names it in
    /// messages (never the arguments: AUTH's is the password).
    private func setUp(_ context: HiredisContext, _ arguments: [String], step: String) -> String? {
        guard context.append(arguments.map { Array($0.utf8) }), let reply = context.nextReply() else {
            return "\(step) on \(endpoint) failed: \(failureText(context))"
        }
        switch reply {
        case .status("OK"): return nil
        case .error(let message): return "\(step) on \(endpoint) was refused: \(message)"
        default: return "\(step) on \(endpoint) gave an unexpected reply"
        }
    }

    private func failureText(_ context: HiredisContext) -> String {
        context.failure(timeout: timeout)?.message ?? "unknown error"
    }
}
