import Clocks
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// A connection in subscribe mode: `messages` delivers what the subscribed channels receive and finishes when the
/// connection drops (pub/sub is at-most-once: a consumer treats the end as "messages may have been lost").
/// `PING` is allowed, as in RESP2's subscribe mode.
public final class RedisSubscription: Sendable {
    package let messages: AsyncStream<RedisPubSubMessage>
    /// The node it is connected to: a cluster's node or Sentinel's primary, not the seed or the Sentinels.
    package let address: RedisEndpoint.Address
    private let connection: RedisConnection

    private init(messages: AsyncStream<RedisPubSubMessage>, address: RedisEndpoint.Address, connection: RedisConnection) {
        self.messages = messages
        self.address = address
        self.connection = connection
    }

    /// Connects to `address` (default: the endpoint's node) with TLS, AUTH and SELECT as for commands; subscribe
    /// next. `timeout` bounds each command (`SUBSCRIBE`, `PING`), `connectTimeout` the connect and its handshake.
    public static func connect(
        _ endpoint: RedisEndpoint, at address: RedisEndpoint.Address? = nil, timeout: Duration = .milliseconds(50),
        connectTimeout: Duration = .seconds(2), eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        bufferingPolicy: AsyncStream<RedisPubSubMessage>.Continuation.BufferingPolicy = .bufferingNewest(10_000),
        logger: Logger = Logger(label: "unicache.redis")
    ) async throws(RedisError) -> RedisSubscription {
        let settings = RedisConnection.Settings(
            endpoint: endpoint, address: address ?? endpoint.address, timeout: timeout, connectTimeout: connectTimeout,
            limits: RESPLimits())
        let (messages, continuation) = AsyncStream.makeStream(of: RedisPubSubMessage.self, bufferingPolicy: bufferingPolicy)
        let connection: RedisConnection
        do {
            connection = try await RedisConnection.open(
                settings, eventLoopGroup: eventLoopGroup, logger: logger, onMessage: { continuation.yield($0) },
                onClose: { continuation.finish() })
        } catch {
            continuation.finish()
            throw error
        }
        return RedisSubscription(messages: messages, address: settings.address, connection: connection)
    }

    /// `SUBSCRIBE` the channels; returns once Redis confirmed each.
    public func subscribe(_ channels: [String]) async throws(RedisError) {
        try await confirm(.subscribe(channels), count: channels.count)
    }

    /// `SSUBSCRIBE` (Redis 7 sharded channels); returns once Redis confirmed each.
    package func ssubscribe(_ channels: [String]) async throws(RedisError) {
        try await confirm(.ssubscribe(channels), count: channels.count)
    }

    /// `PING`: the connection is alive when this returns (a bound: the configuration's command timeout).
    package func ping(timeout: Duration? = nil) async throws(RedisError) {
        let reply = try await connection.send(.ping, timeout: timeout)
        if let error = reply.errorReply { throw .errorReply(error.answering("PING")) }
    }

    /// Keeps the connection checked until it ends or the calling task is cancelled: a `PING` every `interval`, each
    /// bounded by `deadline`. A PING not answered in time (its deadline closes the connection) or refused ends the
    /// watch and the connection: returns that failure. Nil when the task was cancelled or the connection closed.
    /// `elapsed` paces the PINGs (their deadline is the connection's own, on NIO's clock).
    package func keepAlive(every interval: Duration, deadline: Duration, on elapsed: Elapsed) async -> RedisError? {
        while true {
            do { try await elapsed.sleep(for: interval) } catch { return nil }
            do throws(RedisError) {
                try await ping(timeout: deadline)
            } catch .connectionClosed {
                return nil
            } catch {
                closeSoon()
                return error
            }
        }
    }

    package var isActive: Bool { connection.isActive }

    /// Closes the connection; `messages` finishes.
    public func close() async {
        await connection.close()
    }

    /// `close()` for a caller that is not async: starts closing, returns at once.
    package func closeSoon() {
        connection.closeSoon()
    }

    /// Sends a SUBSCRIBE-like command and waits for its `count` confirmations (one per channel); an error reply (a
    /// channel the ACL rules refuse) answers the whole command.
    private func confirm(_ command: RedisCommand, count: Int) async throws(RedisError) {
        guard count > 0 else { throw .unexpectedReply("\(command.name) needs at least one channel") }
        let replies = try await connection.send(
            [command], expectedReplies: count, endsOnError: true, timeout: connection.settings.timeout)
        if let error = replies.lazy.compactMap(\.errorReply).first { throw .errorReply(error.answering(command.name)) }
    }
}
