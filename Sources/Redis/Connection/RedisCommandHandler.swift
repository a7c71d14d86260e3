import NIOConcurrencyHelpers
import NIOCore
import NIOSSL

/// Commands written together; their replies come back as one array, in order, to `completion` (called once, on
/// the connection's event loop).
struct RedisCommandBatch: Sendable {
    let commands: RedisCommandList
    /// Replies that answer the batch: one per command, except SUBSCRIBE-like commands (one per channel).
    let expectedReplies: Int
    /// An error reply answers the whole batch (SUBSCRIBE refused by an ACL is one error, not one per channel).
    var endsOnError = false
    /// When the replies must all be in; past it the connection fails and closes.
    let deadline: NIODeadline
    let completion: @Sendable (Result<RedisReplies, RedisError>) -> Void
}

/// Writes command batches, reads the replies off the channel's bytes and matches them to the batches in order through
/// a FIFO. A deadline that passes with its batch still pending, a protocol violation or a lost connection fails every
/// pending batch and closes the channel, so that a late reply is never matched to a later command. One timer per
/// connection watches the deadlines (armed for the earliest pending one), not one per command.
///
/// The replies are decoded here, not by a decoder handler before this one: passing each reply down the pipeline
/// boxed it in an `NIOAny` and cast it back (~3,500 instructions of a shared hit's ~65,000).
final class RedisCommandHandler: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    /// The batches one flush writes, in order: encoded into one buffer and written once.
    typealias OutboundIn = [RedisCommandBatch]
    typealias OutboundOut = ByteBuffer

    /// A written batch waiting for its replies: what matching them needs, not its commands (copied with it at
    /// every step of the queue).
    private struct Pending {
        let expectedReplies: Int
        let endsOnError: Bool
        let deadline: NIODeadline
        let completion: @Sendable (Result<RedisReplies, RedisError>) -> Void
        var replies: RedisReplies
    }

    private var pending = CircularBuffer<Pending>()
    /// The bytes read so far and the reply under way in them.
    private var replies: NIOSingleStepByteToMessageProcessor<RESPDecoder>
    /// The deadline watch, armed while a batch is pending, for the deadline it was armed with.
    private var watch: (task: Scheduled<Void>, deadline: NIODeadline)?
    /// Set once: the connection is done and refuses new commands with this.
    private var failure: RedisError?
    /// Where pub/sub messages go on a subscription connection (nil: a command connection, where a push is a reply).
    private let onMessage: ((RedisPubSubMessage) -> Void)?
    private let onClose: (() -> Void)?
    /// The first failure, shared with the connection: a command written after the pipeline is gone fails with it.
    private let closeReason: NIOLockedValueBox<RedisError?>

    init(
        limits: RESPLimits, closeReason: NIOLockedValueBox<RedisError?>,
        onMessage: ((RedisPubSubMessage) -> Void)? = nil, onClose: (() -> Void)? = nil
    ) {
        replies = NIOSingleStepByteToMessageProcessor(RESPDecoder(parser: RESPParser(limits: limits)))
        self.closeReason = closeReason
        self.onMessage = onMessage
        self.onClose = onClose
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let batches = unwrapOutboundIn(data)
        promise?.succeed()
        var buffer = context.channel.allocator.buffer(capacity: 64 * batches.reduce(0) { $0 + $1.commands.count })
        var earliest: NIODeadline?
        // The batches are read where they lie: a copy of one retained its commands and its completion.
        for index in batches.indices {
            if let failure {
                batches[index].completion(.failure(failure))
                continue
            }
            let (expected, deadline) = (batches[index].expectedReplies, batches[index].deadline)
            guard expected > 0 else {
                batches[index].completion(.success(RedisReplies(expected: 0)))
                continue
            }
            batches[index].commands.forEach { buffer.writeRESPCommand($0) }
            pending.append(
                Pending(
                    expectedReplies: expected, endsOnError: batches[index].endsOnError, deadline: deadline,
                    completion: batches[index].completion, replies: RedisReplies(expected: expected)))
            earliest = min(earliest ?? deadline, deadline)
        }
        guard let earliest else { return }
        watchDeadline(earliest, context: context)
        // The batches are ours now: a failed write closes the channel, and errorCaught or channelInactive fails them
        // with the cause (a TLS error must not lose the race to the buffered write's "closed"). One write for all of
        // them: the pipeline was walked once per batch, ~6 batches a flush for a shared tier's GETs under load.
        context.write(wrapOutboundOut(buffer), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        do {
            try replies.process(buffer: unwrapInboundIn(data)) { reply in
                // A reply that failed the connection drops the rest: they can only be matched wrongly.
                guard failure == nil else { return }
                received(reply, context: context)
            }
        } catch {
            fail(context, RedisError(channelError: error))
        }
    }

    private func received(_ value: RedisReply, context: ChannelHandlerContext) {
        if let onMessage, let message = RedisPubSubMessage(value) {
            onMessage(message)
            return
        }
        guard !pending.isEmpty else {
            // Redis 7 unsubscribes a sharded channel whose slot moved to another node: the subscription ends.
            if onMessage != nil, value.array?.first?.text == "sunsubscribe" {
                context.close(promise: nil)
                return
            }
            fail(context, .protocolViolation("a reply to no command"))
            return
        }
        // Taken out to be appended to: through the buffer's subscript (a get and a set) the array was shared while
        // appended to, so every reply copied it.
        var head = pending.removeFirst()
        head.replies.append(value)
        if head.replies.count == head.expectedReplies || (head.endsOnError && value.errorReply != nil) {
            head.completion(.success(head.replies))
        } else {
            pending.prepend(head)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        failAll(.connectionClosed)
        onClose?()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(context, RedisError(channelError: error))
    }

    /// Arms the watch for `deadline` unless it is armed for an earlier one already.
    private func watchDeadline(_ deadline: NIODeadline, context: ChannelHandlerContext) {
        if let watch {
            guard deadline < watch.deadline else { return }
            watch.task.cancel()
        }
        let bound = NIOLoopBound((handler: self, context: context), eventLoop: context.eventLoop)
        watch = (context.eventLoop.scheduleTask(deadline: deadline) { bound.value.handler.deadlineReached(bound.value.context) }, deadline)
    }

    /// The watch fired: a pending batch past its deadline fails the connection; else the watch moves on to the
    /// earliest pending deadline (none pending: disarmed).
    private func deadlineReached(_ context: ChannelHandlerContext) {
        watch = nil
        let now = NIODeadline.now()
        var earliest: NIODeadline?
        for entry in pending {
            if entry.deadline <= now { return fail(context, .timeout) }
            earliest = min(earliest ?? entry.deadline, entry.deadline)
        }
        if let earliest { watchDeadline(earliest, context: context) }
    }

    private func fail(_ context: ChannelHandlerContext, _ error: RedisError) {
        failAll(error)
        context.close(promise: nil)
    }

    private func failAll(_ error: RedisError) {
        if failure == nil {
            failure = error
            closeReason.withLockedValue { if $0 == nil { $0 = error } }
        }
        watch?.task.cancel()
        watch = nil
        while let next = pending.popFirst() { next.completion(.failure(error)) }
    }
}

extension RedisError {
    /// What a channel error means to a caller: TLS failures keep their reason, the rest is a closed connection.
    init(channelError error: any Error) {
        switch error {
        case let error as RedisError: self = error
        case let error as NIOSSLError: self = .tls(String(describing: error))
        case let error as NIOSSLExtraError: self = .tls(String(describing: error))
        default: self = .connectionClosed
        }
    }
}
