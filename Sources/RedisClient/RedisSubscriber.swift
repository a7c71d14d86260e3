/// One subscriber connection on its own thread: SUBSCRIBE `channel`, then deliver messages.
///
/// The thread waits in poll(2) on the socket and a wake-up pipe, so `stop()` returns promptly.
/// When nothing arrived for `pingInterval` it sends PING; silence for three intervals (two
/// unanswered pings), EOF, an I/O error or a timeout count as a lost connection: it reports
/// `.disconnected` once, then reconnects by itself with a back-off from 100 ms doubling to 5 s,
/// until `stop()`. Connect, AUTH and SUBSCRIBE are each bounded by `timeout`; once subscribed,
/// the pings bound how long a silent connection goes unnoticed. Pub/sub ignores the database.
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
    public let pingInterval: Duration
    private let core: SubscriberCore
    private let control = Locked(Control.idle)

    private enum Control: Sendable {
        case idle
        case running(JoinableThread)
        /// One stop() is joining the thread; other callers wait for it.
        case stopping(JoinableThread)
        case stopped
    }

    private enum StopAction {
        case none
        case join(JoinableThread)
        case waitForJoin
    }

    /// Events are delivered on the subscriber's thread, one at a time, in order.
    public init(
        endpoint: RedisEndpoint, channel: String, timeout: Duration, pingInterval: Duration = .seconds(1),
        onEvent: @escaping @Sendable (Event) -> Void
    ) {
        self.endpoint = endpoint
        self.channel = channel
        self.timeout = timeout
        self.pingInterval = max(pingInterval, .milliseconds(10))
        core = SubscriberCore(
            endpoint: endpoint, channel: Array(channel.utf8), timeout: max(timeout, .milliseconds(1)),
            pingInterval: self.pingInterval, onEvent: onEvent)
    }

    deinit {
        stop()
    }

    /// Starts the thread. Idempotent; does nothing after `stop()`.
    public func start() {
        let failure = control.withLock { control -> String? in
            guard case .idle = control else { return nil }
            guard let wakeUp = core.wakeUp else {
                control = .stopped
                return "cannot create a wake-up pipe"
            }
            switch JoinableThread.start(name: "redis-subscribe", { [core] in core.run(wakeUp: wakeUp) }) {
            case .success(let thread):
                control = .running(thread)
                return nil
            case .failure(let error):
                control = .stopped
                return error.message
            }
        }
        if let failure { core.emit(.disconnected(failure)) }
    }

    /// Stops and joins the thread (promptly: it waits in poll with the wake-up pipe). Idempotent.
    /// No event is delivered after it returns. May be called from `onEvent` (then it does not join).
    public func stop() {
        let action = control.withLock { control -> StopAction in
            switch control {
            case .idle, .stopped:
                control = .stopped
                return .none
            case .running(let thread):
                control = .stopping(thread)
                return .join(thread)
            case .stopping(let thread):
                // From onEvent while another caller joins: waiting here would deadlock.
                return thread.isCurrent ? .none : .waitForJoin
            }
        }
        core.flags.withLock { $0.stopping = true }
        core.wakeUp?.wake()
        switch action {
        case .none:
            break
        case .join(let thread):
            thread.join()
            control.withLock { $0 = .stopped }
            control.broadcast()
        case .waitForJoin:
            control.withLock(waitingUntil: { if case .stopped = $0 { true } else { false } }) { _ in }
        }
    }

    /// Whether the subscription is confirmed and the connection not known to be lost (false
    /// once stop() was called).
    public var isConnected: Bool {
        core.flags.withLock { $0.connected && !$0.stopping }
    }
}

/// What the subscriber thread works with (it does not keep the `RedisSubscriber` alive).
final class SubscriberCore: Sendable {
    struct Flags: Sendable {
        var connected = false
        var stopping = false
    }

    let endpoint: RedisEndpoint
    let channel: [UInt8]
    let timeout: Duration
    let pingInterval: Duration
    let onEvent: @Sendable (RedisSubscriber.Event) -> Void
    let wakeUp = WakeUpPipe()
    let flags = Locked(Flags())

    static let initialBackoff = Duration.milliseconds(100)
    static let maxBackoff = Duration.seconds(5)

    init(
        endpoint: RedisEndpoint, channel: [UInt8], timeout: Duration, pingInterval: Duration,
        onEvent: @escaping @Sendable (RedisSubscriber.Event) -> Void
    ) {
        self.endpoint = endpoint
        self.channel = channel
        self.timeout = timeout
        self.pingInterval = pingInterval
        self.onEvent = onEvent
    }

    /// Delivers an event unless stop() was called.
    func emit(_ event: RedisSubscriber.Event) {
        guard !flags.withLock({ $0.stopping }) else { return }
        onEvent(event)
    }

    private enum Outcome {
        case stopped
        case lost(String, wasSubscribed: Bool)
    }

    /// The thread: sessions with back-off between them until stopped.
    func run(wakeUp: WakeUpPipe) {
        var backoff = Self.initialBackoff
        var reportedDown = false
        while true {
            let outcome = session(wakeUp: wakeUp)
            flags.withLock { $0.connected = false }
            guard case .lost(let reason, let wasSubscribed) = outcome else { return }
            if wasSubscribed {
                backoff = Self.initialBackoff
                reportedDown = false
            }
            if !reportedDown {
                emit(.disconnected(reason))
                reportedDown = true
            }
            if waitForWakeUp(wakeUp, timeout: backoff) { return }
            backoff = min(backoff * 2, Self.maxBackoff)
        }
    }

    /// One connection: connect, AUTH, SUBSCRIBE, then receive until lost or stopped.
    private func session(wakeUp: WakeUpPipe) -> Outcome {
        let clock = ContinuousClock()
        let context: HiredisContext
        switch HiredisContext.connectNonBlocking(host: endpoint.host, port: endpoint.port) {
        case .success(let connecting): context = connecting
        case .failure(let failure): return .lost("cannot connect to \(endpoint): \(failure.message)", wasSubscribed: false)
        }
        let connected = pollSocket(context.descriptor, forWriting: true, wakeUp: wakeUp, timeout: timeout)
        if connected.woken { return .stopped }
        guard connected.writable || connected.failed else {
            return .lost("cannot connect to \(endpoint): timed out after \(timeout.shortDescription)", wasSubscribed: false)
        }
        if let error = context.pendingConnectError() {
            return .lost("cannot connect to \(endpoint): \(error)", wasSubscribed: false)
        }

        if let auth = endpoint.authArguments {
            guard context.append(auth.map { Array($0.utf8) }) else {
                return .lost("cannot queue AUTH", wasSubscribed: false)
            }
        }
        guard context.append([Array("SUBSCRIBE".utf8), channel]) else {
            return .lost("cannot queue SUBSCRIBE", wasSubscribed: false)
        }
        let deadline = clock.now.advanced(by: timeout)
        if let outcome = flushAll(context, until: deadline, step: "SUBSCRIBE", wakeUp: wakeUp) { return outcome }
        if endpoint.password != nil {
            switch awaitReply(context, until: deadline, step: "AUTH", wakeUp: wakeUp) {
            case .failure(let error): return error.outcome
            case .success(.status("OK")): break
            case .success(.error(let message)):
                return .lost("AUTH on \(endpoint) was refused: \(message)", wasSubscribed: false)
            case .success: return .lost("AUTH on \(endpoint) gave an unexpected reply", wasSubscribed: false)
            }
        }
        switch awaitReply(context, until: deadline, step: "SUBSCRIBE", wakeUp: wakeUp) {
        case .failure(let error): return error.outcome
        case .success(.array(let items)) where items.first == .string(Array("subscribe".utf8)):
            break
        case .success(.error(let message)):
            return .lost("SUBSCRIBE on \(endpoint) was refused: \(message)", wasSubscribed: false)
        case .success: return .lost("SUBSCRIBE on \(endpoint) gave an unexpected reply", wasSubscribed: false)
        }

        flags.withLock { $0.connected = true }
        emit(.subscribed)
        return receive(context, wakeUp: wakeUp)
    }

    /// Delivers messages and keeps the connection checked with PINGs.
    private func receive(_ context: HiredisContext, wakeUp: WakeUpPipe) -> Outcome {
        let clock = ContinuousClock()
        var lastHeard = clock.now
        var lastPing = lastHeard
        var writePending = false
        while true {
            // Everything already read, first (one read can bring several replies).
            while true {
                switch context.bufferedReply() {
                case .failure(let failure):
                    return .lost("reading from \(endpoint) failed: \(failure.message)", wasSubscribed: true)
                case .success(nil):
                    break
                case .success(let reply?):
                    lastHeard = clock.now
                    if case .array(let items) = reply, items.count == 3, items[0] == .string(Array("message".utf8)),
                        case .string(let payload) = items[2]
                    {
                        emit(.message(payload))
                    }
                    continue
                }
                break
            }

            let now = clock.now
            let silenceLimit = lastHeard.advanced(by: pingInterval * 3)
            if now >= silenceLimit {
                return .lost(
                    "no reply from \(endpoint) to PING within \((pingInterval * 2).shortDescription)",
                    wasSubscribed: true)
            }
            let pingDue = max(lastHeard, lastPing).advanced(by: pingInterval)
            if now >= pingDue {
                guard context.append([Array("PING".utf8)]) else {
                    return .lost("cannot queue PING", wasSubscribed: true)
                }
                lastPing = now
                writePending = true
            }
            if writePending {
                switch context.flush() {
                case nil:
                    return .lost("writing to \(endpoint) failed: \(failureText(context))", wasSubscribed: true)
                case true?: writePending = false
                case false?: break
                }
            }

            let nextPing = max(lastHeard, lastPing).advanced(by: pingInterval)
            let wait = now.duration(to: min(nextPing, silenceLimit))
            let polled = pollSocket(context.descriptor, forWriting: writePending, wakeUp: wakeUp, timeout: wait)
            if polled.woken { return .stopped }
            if polled.readable || polled.failed {
                guard context.readIntoBuffer() else {
                    return .lost("reading from \(endpoint) failed: \(failureText(context))", wasSubscribed: true)
                }
            }
        }
    }

    /// Writes the whole output buffer, waiting for the socket at most until `deadline`.
    private func flushAll(
        _ context: HiredisContext, until deadline: ContinuousClock.Instant, step: String, wakeUp: WakeUpPipe
    ) -> Outcome? {
        while true {
            switch context.flush() {
            case nil: return .lost("\(step) on \(endpoint) failed: \(failureText(context))", wasSubscribed: false)
            case true?: return nil
            case false?: break
            }
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else {
                return .lost("\(step) on \(endpoint) timed out after \(timeout.shortDescription)", wasSubscribed: false)
            }
            let polled = pollSocket(context.descriptor, forWriting: true, wakeUp: wakeUp, timeout: remaining)
            if polled.woken { return .stopped }
        }
    }

    /// The next reply, reading at most until `deadline`.
    private func awaitReply(
        _ context: HiredisContext, until deadline: ContinuousClock.Instant, step: String, wakeUp: WakeUpPipe
    ) -> Result<RedisReply, OutcomeError> {
        while true {
            switch context.bufferedReply() {
            case .failure(let failure):
                return .failure(OutcomeError(.lost("\(step) on \(endpoint) failed: \(failure.message)", wasSubscribed: false)))
            case .success(let reply?):
                return .success(reply)
            case .success(nil):
                break
            }
            let remaining = ContinuousClock.now.duration(to: deadline)
            guard remaining > .zero else {
                return .failure(OutcomeError(
                    .lost("\(step) on \(endpoint) timed out after \(timeout.shortDescription)", wasSubscribed: false)))
            }
            let polled = pollSocket(context.descriptor, forWriting: false, wakeUp: wakeUp, timeout: remaining)
            if polled.woken { return .failure(OutcomeError(.stopped)) }
            if polled.readable || polled.failed {
                guard context.readIntoBuffer() else {
                    return .failure(OutcomeError(
                        .lost("\(step) on \(endpoint) failed: \(failureText(context))", wasSubscribed: false)))
                }
            }
        }
    }

    private struct OutcomeError: Error {
        let outcome: Outcome
        init(_ outcome: Outcome) { self.outcome = outcome }
    }

    private func failureText(_ context: HiredisContext) -> String {
        context.failure(timeout: nil)?.message ?? "unknown error"
    }
}
