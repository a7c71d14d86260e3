// The Redis link on SwiftNIO (RESP2). A `RedisConnection` is one TCP or TLS connection on an event loop that pipelines
// commands and matches replies in order; a deadline that passes fails what is in flight and closes the connection.
// A `RedisNodeClient` (Node/) keeps a few of them to one node behind a circuit breaker; `RedisSentinel` (Sentinel/)
// finds a group's primary and follows its failovers; `RedisSubscription` and `RedisSubscriber` (Subscription/) carry
// the invalidation channel.
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import Synchronization

/// One connection to a Redis node: commands pipelined, replies matched in order. Once closed (by `close()`, a
/// deadline, a protocol violation or the server) it fails what was pending and refuses new commands: make a new one.
package final class RedisConnection: Sendable {
    /// What this connection was made with: the endpoint, the node's address, its bounds.
    let settings: Settings
    let channel: any Channel
    /// Why the connection closed (its handler's first failure), for commands written after it closed.
    let closeReason: NIOLockedValueBox<RedisError?>
    /// Batches sent from other threads, waiting for the loop's task that writes them (`scheduled`: it is queued).
    private let outbox = NIOLockedValueBox(Outbox())
    /// `outbox.scheduled`, readable without the lock (set and cleared under it): a node client asks every
    /// connection whether it collects before each command.
    private let collecting = Atomic<Bool>(false)

    private struct Outbox {
        /// The batches a flush usually carries at most (a polling thread's burst).
        static let burst = 16
        var batches: [RedisCommandBatch] = []
        var scheduled = false
    }

    /// What one connect needs: the endpoint (TLS, credentials, database), the node's address, the bound of a command
    /// (`timeout`) and of the connect (TLS and the handshake included), and the limits of a reply.
    struct Settings: Sendable {
        var endpoint: RedisEndpoint
        var address: RedisEndpoint.Address
        var timeout: Duration
        var connectTimeout: Duration
        var limits: RESPLimits
    }

    init(settings: Settings, channel: any Channel, closeReason: NIOLockedValueBox<RedisError?>) {
        self.settings = settings
        self.channel = channel
        self.closeReason = closeReason
    }

    /// The endpoint this connection authenticated to (its credentials, TLS and database).
    public var endpoint: RedisEndpoint { settings.endpoint }

    /// The node connected to.
    public var address: RedisEndpoint.Address { settings.address }

    /// Sends every command (all written before any reply is read) and returns their replies in order. An error
    /// reply is a `.error` value in its place. Throws `.timeout` when the replies are not all in within `timeout`
    /// (default: the connection's): then this connection is closed.
    public func send(_ commands: [RedisCommand], timeout: Duration? = nil) async throws(RedisError) -> [RedisReply] {
        try await send(commands, expectedReplies: commands.count, timeout: timeout ?? settings.timeout)
    }

    /// One command's reply.
    public func send(_ command: RedisCommand, timeout: Duration? = nil) async throws(RedisError) -> RedisReply {
        let replies = try await send([command], timeout: timeout)
        guard let reply = replies.first else { throw .unexpectedReply("no reply") }
        return reply
    }

    func send(
        _ commands: [RedisCommand], expectedReplies: Int, endsOnError: Bool = false, timeout: Duration
    ) async throws(RedisError) -> [RedisReply] {
        try await withCheckedContinuation { continuation in
            enqueue(
                RedisCommandList(commands), expectedReplies: expectedReplies, endsOnError: endsOnError,
                timeout: TimeAmount(timeout)
            ) {
                continuation.resume(returning: $0.map(Array.init))
            }
        }.get()
    }

    /// `send` for a caller that is not async: hands the batch to the event loop, and `completion` gets the replies
    /// (or the error) once, on the loop, with no task and no future in between. On the loop the batch is written at
    /// once; from another thread it joins the outbox, which the loop empties in one task with one flush (commands
    /// sent from many threads meanwhile share a wake-up and a write). `timeout` as a `TimeAmount`, converted once by
    /// the caller (from a `Duration` the conversion was ~190 instructions a command).
    func enqueue(
        _ commands: consuming RedisCommandList, expectedReplies: Int, endsOnError: Bool = false, timeout: TimeAmount,
        completion: @escaping @Sendable (Result<RedisReplies, RedisError>) -> Void
    ) {
        var batch: RedisCommandBatch? = RedisCommandBatch(
            commands: commands, expectedReplies: expectedReplies, endsOnError: endsOnError,
            deadline: .now() + timeout, completion: completion)
        if channel.eventLoop.inEventLoop {
            if let batch = batch.take() { write([batch]) }
            channel.flush()
            return
        }
        let first = outbox.withLockedValue { outbox -> Bool in
            // Room for a burst at once: grown from empty, a flush of four batches made three arrays.
            if outbox.batches.isEmpty { outbox.batches.reserveCapacity(Outbox.burst) }
            // Moved into the outbox, not copied (a copy retained its commands and its completion).
            if let batch = batch.take() { outbox.batches.append(batch) }
            guard !outbox.scheduled else { return false }
            outbox.scheduled = true
            collecting.store(true, ordering: .relaxed)
            return true
        }
        if first { channel.eventLoop.execute { self.writeOutbox() } }
    }

    /// On the loop: writes what the outbox holds, then flushes once.
    private func writeOutbox() {
        let batches = outbox.withLockedValue { outbox -> [RedisCommandBatch] in
            defer {
                outbox = Outbox()
                collecting.store(false, ordering: .relaxed)
            }
            return outbox.batches
        }
        write(batches)
        channel.flush()
    }

    /// On the loop: to the command handler in one write, unless the channel is closed (then its handlers may be
    /// gone).
    private func write(_ batches: [RedisCommandBatch]) {
        guard channel.isActive else {
            let reason = closeReason.withLockedValue { $0 } ?? .connectionClosed
            for batch in batches { batch.completion(.failure(reason)) }
            return
        }
        channel.write(batches, promise: nil)
    }

    /// False once the connection is closed (then every command fails).
    package var isActive: Bool { channel.isActive }

    /// Whether commands sent from other threads wait in the outbox for the loop: a command sent now joins their
    /// write (and, Redis answering a pipeline together, their read).
    var isCollecting: Bool { collecting.load(ordering: .relaxed) }

    /// Completes when the connection has closed, for whatever reason.
    package var closeFuture: EventLoopFuture<Void> { channel.closeFuture }

    /// Closes the connection; pending commands fail with `.connectionClosed`.
    public func close() async {
        try? await channel.close()
    }

    /// `close()` for a caller that is not async: starts closing, returns at once.
    package func closeSoon() {
        channel.close(promise: nil)
    }
}

extension TimeAmount {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
