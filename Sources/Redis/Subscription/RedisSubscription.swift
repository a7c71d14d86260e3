import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A connection in subscribe mode: `messages` delivers what the subscribed channels receive and finishes when the
/// connection drops (pub/sub is at-most-once: a consumer treats the end as "messages may have been lost").
/// `PING` is allowed, as in RESP2's subscribe mode.
public final class RedisSubscription: Sendable {
    public let messages: AsyncStream<RedisPubSubMessage>
    private let connection: RedisConnection

    private init(messages: AsyncStream<RedisPubSubMessage>, connection: RedisConnection) {
        self.messages = messages
        self.connection = connection
    }

    /// Connects (TLS, AUTH, SELECT as for commands); subscribe next.
    public static func connect(
        _ configuration: RedisConnectionConfiguration,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        bufferingPolicy: AsyncStream<RedisPubSubMessage>.Continuation.BufferingPolicy = .bufferingNewest(10_000),
        logger: Logger = Logger(label: "unicache.redis")
    ) async throws -> RedisSubscription {
        let (messages, continuation) = AsyncStream.makeStream(of: RedisPubSubMessage.self, bufferingPolicy: bufferingPolicy)
        let channel: any Channel
        let closeReason = NIOLockedValueBox<RedisNIOError?>(nil)
        do {
            channel = try await RedisConnection.makeChannel(configuration, eventLoopGroup: eventLoopGroup) {
                RedisCommandHandler(
                    closeReason: closeReason, onMessage: { continuation.yield($0) }, onClose: { continuation.finish() })
            }
        } catch {
            continuation.finish()
            throw error
        }
        let connection = RedisConnection(configuration: configuration, channel: channel, closeReason: closeReason)
        try await connection.handshake(logger: logger, eventLoopGroup: eventLoopGroup)
        return RedisSubscription(messages: messages, connection: connection)
    }

    /// `SUBSCRIBE` the channels; returns once Redis confirmed each.
    public func subscribe(_ channels: [String]) async throws {
        try await confirm("SUBSCRIBE", channels)
    }

    /// `SSUBSCRIBE` (Redis 7 sharded channels); returns once Redis confirmed each.
    public func ssubscribe(_ channels: [String]) async throws {
        try await confirm("SSUBSCRIBE", channels)
    }

    /// `PSUBSCRIBE` the patterns; returns once Redis confirmed each.
    public func psubscribe(_ patterns: [String]) async throws {
        try await confirm("PSUBSCRIBE", patterns)
    }

    /// `UNSUBSCRIBE` the channels (at least one); returns once Redis confirmed each.
    public func unsubscribe(_ channels: [String]) async throws {
        try await confirm("UNSUBSCRIBE", channels)
    }

    /// `PING`: the connection is alive when this returns (a bound: the configuration's command timeout).
    public func ping(timeout: Duration? = nil) async throws {
        let reply = try await connection.send(["PING"], timeout: timeout)
        if let error = reply.serverError { throw error.answering("PING") }
    }

    /// Keeps the connection checked until it ends or the calling task is cancelled: a `PING` every `interval`, each
    /// bounded by `deadline`. A PING not answered in time (its deadline closes the connection) or refused ends the
    /// watch and the connection: returns that failure. Nil when the task was cancelled or the connection closed.
    public func keepAlive(every interval: Duration, deadline: Duration) async -> (any Error)? {
        while true {
            do { try await Task.sleep(for: interval) } catch { return nil }
            do {
                try await ping(timeout: deadline)
            } catch RedisNIOError.connectionClosed {
                return nil
            } catch {
                closeSoon()
                return error
            }
        }
    }

    public var isActive: Bool { connection.isActive }

    /// Closes the connection; `messages` finishes.
    public func close() async {
        await connection.close()
    }

    /// `close()` for a caller that is not async: starts closing, returns at once.
    public func closeSoon() {
        connection.closeSoon()
    }

    private func confirm(_ command: String, _ names: [String]) async throws {
        guard !names.isEmpty else { throw RedisNIOError.unexpectedReply("\(command) needs at least one name") }
        let replies = try await connection.send(
            [[RESPArgument(command)] + names.map { RESPArgument($0) }], expectedReplies: names.count,
            endsOnError: true, timeout: connection.configuration.commandTimeout)
        if let error = replies.lazy.compactMap(\.serverError).first { throw error.answering(command) }
    }
}
