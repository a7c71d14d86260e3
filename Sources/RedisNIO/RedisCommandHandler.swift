import NIOConcurrencyHelpers
import NIOCore
import NIOSSL

/// Commands written together; their replies come back as one array, in order.
struct RedisCommandBatch: Sendable {
    let commands: [[RESPArgument]]
    /// Replies that answer the batch: one per command, except SUBSCRIBE-like commands (one per channel).
    let expectedReplies: Int
    /// An error reply answers the whole batch (SUBSCRIBE refused by an ACL is one error, not one per channel).
    var endsOnError = false
    let promise: EventLoopPromise<[RESPValue]>
}

/// The deadline of the batch whose reply future this is has passed (a user outbound event).
struct RedisDeadlinePassed: Sendable {
    let future: EventLoopFuture<[RESPValue]>
}

/// Writes command batches and matches replies to them in order through a FIFO of promises. A deadline that passes
/// with the batch still pending, a protocol violation or a lost connection fails every pending batch and closes the
/// channel, so that a late reply is never matched to a later command.
final class RedisCommandHandler: ChannelDuplexHandler {
    typealias InboundIn = RESPValue
    typealias OutboundIn = RedisCommandBatch
    typealias OutboundOut = ByteBuffer

    private struct Pending {
        let promise: EventLoopPromise<[RESPValue]>
        let expected: Int
        let endsOnError: Bool
        var replies: [RESPValue]
    }

    private var pending = CircularBuffer<Pending>()
    /// Set once: the connection is done and refuses new commands with this.
    private var failure: RedisNIOError?
    /// Where pub/sub messages go on a subscription connection (nil: a command connection, where a push is a reply).
    private let onMessage: ((RedisPubSubMessage) -> Void)?
    private let onClose: (() -> Void)?
    /// The first failure, shared with the connection: a command written after the pipeline is gone fails with it.
    private let closeReason: NIOLockedValueBox<RedisNIOError?>

    init(
        closeReason: NIOLockedValueBox<RedisNIOError?>, onMessage: ((RedisPubSubMessage) -> Void)? = nil,
        onClose: (() -> Void)? = nil
    ) {
        self.closeReason = closeReason
        self.onMessage = onMessage
        self.onClose = onClose
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        let batch = unwrapOutboundIn(data)
        if let failure {
            batch.promise.fail(failure)
            promise?.fail(failure)
            return
        }
        guard batch.expectedReplies > 0 else {
            batch.promise.succeed([])
            promise?.succeed()
            return
        }
        var buffer = context.channel.allocator.buffer(capacity: 64 * batch.commands.count)
        for command in batch.commands { buffer.writeRESPCommand(command) }
        var replies: [RESPValue] = []
        replies.reserveCapacity(batch.expectedReplies)
        pending.append(Pending(promise: batch.promise, expected: batch.expectedReplies, endsOnError: batch.endsOnError, replies: replies))
        // The batch is ours now: a failed write closes the channel, and errorCaught or channelInactive fails it with
        // the cause (a TLS error must not lose the race to the buffered write's "closed").
        promise?.succeed()
        context.write(wrapOutboundOut(buffer), promise: nil)
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let value = unwrapInboundIn(data)
        if let onMessage, let message = RedisPubSubMessage(value) {
            onMessage(message)
            return
        }
        guard !pending.isEmpty else {
            fail(context, .protocolViolation("a reply to no command"))
            return
        }
        pending[pending.startIndex].replies.append(value)
        let head = pending[pending.startIndex]
        if head.replies.count == head.expected || (head.endsOnError && value.serverError != nil) {
            let done = pending.removeFirst()
            done.promise.succeed(done.replies)
        }
    }

    func channelInactive(context: ChannelHandlerContext) {
        failAll(.connectionClosed)
        onClose?()
        context.fireChannelInactive()
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        fail(context, RedisNIOError(channelError: error))
    }

    func triggerUserOutboundEvent(context: ChannelHandlerContext, event: Any, promise: EventLoopPromise<Void>?) {
        guard let deadline = event as? RedisDeadlinePassed else {
            context.triggerUserOutboundEvent(event, promise: promise)
            return
        }
        if pending.contains(where: { $0.promise.futureResult === deadline.future }) {
            fail(context, .timeout)
        }
        promise?.succeed()
    }

    private func fail(_ context: ChannelHandlerContext, _ error: RedisNIOError) {
        failAll(error)
        context.close(promise: nil)
    }

    private func failAll(_ error: RedisNIOError) {
        if failure == nil {
            failure = error
            closeReason.withLockedValue { if $0 == nil { $0 = error } }
        }
        while let next = pending.popFirst() { next.promise.fail(error) }
    }
}

extension RedisNIOError {
    /// What a channel error means to a caller: TLS failures keep their reason, the rest is a closed connection.
    init(channelError error: any Error) {
        switch error {
        case let error as RedisNIOError: self = error
        case let error as NIOSSLError: self = .tls(String(describing: error))
        case let error as NIOSSLExtraError: self = .tls(String(describing: error))
        default: self = .connectionClosed
        }
    }
}
