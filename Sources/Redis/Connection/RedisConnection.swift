// RedisNIO: a Redis client on SwiftNIO (RESP2). One `RedisConnection` is one TCP or TLS connection on an event
// loop that pipelines commands and matches replies in order; a deadline that passes fails what is in flight and
// closes the connection. `RedisSubscription` delivers pub/sub messages as an AsyncStream. `RedisURL` parses
// `redis://`, `rediss://` and `redis-sentinel://`; `RedisSentinel` finds the primary and follows `+promoted-slave`
// and `+switch-master`. RedisClient runs the service's command pool and invalidation subscriber on it.
import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix
import NIOSSL

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// One connection to a Redis node: commands pipelined, replies matched in order. Once closed (by `close()`, a
/// deadline, a protocol violation or the server) it fails what was pending and refuses new commands: make a new one.
public final class RedisConnection: Sendable {
    public let configuration: RedisConnectionConfiguration
    let channel: any Channel
    /// Why the connection closed (its handler's first failure), for commands written after it closed.
    let closeReason: NIOLockedValueBox<RedisNIOError?>
    /// Batches sent from other threads, waiting for the loop's task that writes them (`scheduled`: it is queued).
    private let outbox = NIOLockedValueBox(Outbox())

    private struct Outbox {
        var batches: [RedisCommandBatch] = []
        var scheduled = false
    }

    init(configuration: RedisConnectionConfiguration, channel: any Channel, closeReason: NIOLockedValueBox<RedisNIOError?>) {
        self.configuration = configuration
        self.channel = channel
        self.closeReason = closeReason
    }

    /// Connects, completes TLS, sends AUTH and SELECT (or PING). Throws `RedisServerError` when AUTH or SELECT is
    /// refused (`WRONGPASS`, `NOAUTH`, `NOPERM`), `RedisNIOError` otherwise (`.tls` says which check failed).
    public static func connect(
        _ configuration: RedisConnectionConfiguration,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "unicache.redis")
    ) async throws -> RedisConnection {
        let closeReason = NIOLockedValueBox<RedisNIOError?>(nil)
        let channel = try await makeChannel(configuration, eventLoopGroup: eventLoopGroup) {
            RedisCommandHandler(closeReason: closeReason)
        }
        let connection = RedisConnection(configuration: configuration, channel: channel, closeReason: closeReason)
        try await connection.handshake(logger: logger, eventLoopGroup: eventLoopGroup)
        return connection
    }

    /// Sends every command (all written before any reply is read) and returns their replies in order. An error
    /// reply is a `.error` value in its place. Throws `RedisNIOError.timeout` when the replies are not all in within
    /// `timeout` (default: the configuration's): then this connection is closed.
    public func send(_ commands: [[RESPArgument]], timeout: Duration? = nil) async throws(RedisNIOError) -> [RESPValue] {
        try await send(commands, expectedReplies: commands.count, timeout: timeout ?? configuration.commandTimeout)
    }

    /// One command's reply.
    public func send(_ command: [RESPArgument], timeout: Duration? = nil) async throws(RedisNIOError) -> RESPValue {
        let replies = try await send([command], timeout: timeout)
        guard let reply = replies.first else { throw .unexpectedReply("no reply") }
        return reply
    }

    func send(
        _ commands: [[RESPArgument]], expectedReplies: Int, endsOnError: Bool = false, timeout: Duration
    ) async throws(RedisNIOError) -> [RESPValue] {
        try await withCheckedContinuation { continuation in
            enqueue(commands, expectedReplies: expectedReplies, endsOnError: endsOnError, timeout: timeout) {
                continuation.resume(returning: $0)
            }
        }.get()
    }

    /// `send` for a caller that is not async: `completion` gets the replies (or a `RedisNIOError`) once, on the
    /// connection's event loop, with no task and no future in between.
    public func enqueue(
        _ commands: [[RESPArgument]], timeout: Duration? = nil,
        completion: @escaping @Sendable (Result<[RESPValue], RedisNIOError>) -> Void
    ) {
        enqueue(
            commands, expectedReplies: commands.count, timeout: timeout ?? configuration.commandTimeout,
            completion: completion)
    }

    /// Hands the batch to the event loop: written at once on it; from another thread, put in the outbox, which the
    /// loop empties in one task with one flush (commands sent from many threads meanwhile share a wake-up and a
    /// write).
    func enqueue(
        _ commands: [[RESPArgument]], expectedReplies: Int, endsOnError: Bool = false, timeout: Duration,
        completion: @escaping @Sendable (Result<[RESPValue], RedisNIOError>) -> Void
    ) {
        let batch = RedisCommandBatch(
            commands: commands, expectedReplies: expectedReplies, endsOnError: endsOnError,
            deadline: .now() + TimeAmount(timeout), completion: completion)
        if channel.eventLoop.inEventLoop {
            write(batch)
            channel.flush()
            return
        }
        let first = outbox.withLockedValue { outbox -> Bool in
            outbox.batches.append(batch)
            defer { outbox.scheduled = true }
            return !outbox.scheduled
        }
        if first { channel.eventLoop.execute { self.writeOutbox() } }
    }

    /// On the loop: writes what the outbox holds, then flushes once.
    private func writeOutbox() {
        let batches = outbox.withLockedValue { outbox -> [RedisCommandBatch] in
            defer { outbox = Outbox() }
            return outbox.batches
        }
        for batch in batches { write(batch) }
        channel.flush()
    }

    /// On the loop: to the command handler, unless the channel is closed (then its handlers may be gone).
    private func write(_ batch: RedisCommandBatch) {
        guard channel.isActive else {
            return batch.completion(.failure(closeReason.withLockedValue { $0 } ?? .connectionClosed))
        }
        channel.write(batch, promise: nil)
    }

    /// False once the connection is closed (then every command fails).
    public var isActive: Bool { channel.isActive }

    /// Whether commands sent from other threads wait in the outbox for the loop: a command sent now joins their
    /// write (and, Redis answering a pipeline together, their read).
    public var isCollecting: Bool { outbox.withLockedValue { $0.scheduled } }

    /// Completes when the connection has closed, for whatever reason.
    public var closeFuture: EventLoopFuture<Void> { channel.closeFuture }

    /// Closes the connection; pending commands fail with `.connectionClosed`.
    public func close() async {
        try? await channel.close()
    }

    /// `close()` for a caller that is not async: starts closing, returns at once.
    public func closeSoon() {
        channel.close(promise: nil)
    }

    /// AUTH and SELECT (or PING) on the new connection, bounded by the connect timeout. A refusal is thrown as the
    /// `RedisServerError` of the command it answered (a refused AUTH without Redis's text); any other failure is
    /// explained (which TLS check failed). The connection is closed when this throws.
    func handshake(logger: Logger, eventLoopGroup: any EventLoopGroup) async throws {
        let commands = configuration.handshake
        let replies: [RESPValue]
        do {
            replies = try await send(commands, timeout: configuration.connectTimeout)
        } catch {
            await close()
            throw await Self.explained(error, configuration, eventLoopGroup: eventLoopGroup)
        }
        for (command, reply) in zip(commands, replies) {
            guard let refused = reply.serverError else { continue }
            let error = refused.answering(command.first.map { String(decoding: $0.bytes, as: UTF8.self) } ?? "")
            await close()
            logger.debug("Redis refused the connection's handshake", metadata: [
                "redis": "\(configuration)", "error": "\(error)",
            ])
            throw error
        }
    }

    /// A TCP (or TLS) channel to the configured node with the RESP decoder and `handler()` in its pipeline.
    static func makeChannel(
        _ configuration: RedisConnectionConfiguration, eventLoopGroup: any EventLoopGroup,
        handler: @escaping @Sendable () -> RedisCommandHandler
    ) async throws -> any Channel {
        let tls = try configuration.tls.map { options throws(RedisNIOError) in
            (options: options, context: try options.makeContext())
        }
        let host = configuration.host
        let limits = configuration.limits
        let bootstrap = ClientBootstrap(group: eventLoopGroup)
            .connectTimeout(TimeAmount(configuration.connectTimeout))
            .channelOption(.socketOption(.so_keepalive), value: 1)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    if let tls {
                        try pipeline.addHandler(tls.options.handler(context: tls.context, for: host))
                    }
                    try pipeline.addHandler(ByteToMessageHandler(RESPDecoder(parser: RESPParser(limits: limits))))
                    try pipeline.addHandler(handler())
                }
            }
        do {
            // An address is connected to directly: no resolver, no Happy Eyeballs delay, a refusal seen at once.
            if let address = try? SocketAddress(ipAddress: configuration.host, port: configuration.port) {
                return try await bootstrap.connect(to: address).get()
            }
            return try await bootstrap.connect(host: configuration.host, port: configuration.port).get()
        } catch let error as RedisNIOError {
            throw error
        } catch {
            throw RedisNIOError.connectFailed(connectFailureReason(error, timeout: configuration.connectTimeout))
        }
    }

    /// A failed handshake's error, with the TLS reason made specific (expired, not yet valid, untrusted, wrong name).
    static func explained(
        _ error: RedisNIOError, _ configuration: RedisConnectionConfiguration, eventLoopGroup: any EventLoopGroup
    ) async -> RedisNIOError {
        guard let options = configuration.tls else { return error }
        // TLS 1.3: the client's handshake is done before the server checks the client's certificate, so a refused
        // one shows as the server closing the connection before it answers AUTH or PING.
        if error == .connectionClosed {
            return .tls("the server closed the connection during the handshake (it refused the client certificate, or wants one)")
        }
        guard case .tls(let reason) = error else { return error }
        let expectedName = options.serverHostname(for: configuration.host)
        if reason.contains("ailedToValidateHostname") || reason.contains("Couldn't find") {
            return .tls("the certificate does not name \(expectedName ?? configuration.host) (wrong name)")
        }
        guard reason.contains("CERTIFICATE_VERIFY_FAILED") else { return error }
        guard let certificate = await RedisTLSDiagnosis.peerCertificate(configuration, eventLoopGroup: eventLoopGroup)
        else { return .tls("the certificate did not verify (\(reason))") }
        let now = time(nil)
        if certificate.notValidAfter < now { return .tls("the certificate has expired (certificate verify failed)") }
        if certificate.notValidBefore > now { return .tls("the certificate is not valid yet (certificate verify failed)") }
        return .tls("the certificate is not issued by a trusted CA (certificate verify failed)")
    }
}

/// Why a connect failed, in a few words ("refused (nothing accepts connections there)", "timed out after 50 ms"),
/// without the resolver's and NIO's wrapping.
func connectFailureReason(_ error: any Error, timeout: Duration) -> String {
    switch error {
    case let error as NIOConnectionError:
        if let first = error.connectionErrors.first { return connectFailureReason(first.error, timeout: timeout) }
        if let resolution = error.dnsAError ?? error.dnsAAAAError { return "cannot resolve \(error.host): \(resolution)" }
        return "cannot connect to \(error.host):\(error.port)"
    case let error as IOError:
        return systemReason(error.errnoCode)
    case ChannelError.connectTimeout:
        return "timed out after \(timeout.shortDescription)"
    default:
        return "\(error)"
    }
}

/// A failed connect's errno in plain words ("refused (nothing accepts connections there)"), not NIO's text (whose
/// brackets do not balance).
func systemReason(_ code: CInt) -> String {
    switch code {
    case ECONNREFUSED: "refused (nothing accepts connections there)"
    case ECONNRESET: "reset by the other end"
    case ETIMEDOUT: "timed out"
    case EHOSTUNREACH: "no route to the host"
    case ENETUNREACH: "the network is unreachable"
    case EADDRNOTAVAIL: "no local address to connect from"
    default: "\(strerror(code).map { String(cString: $0) } ?? "error") (errno \(code))"
    }
}

extension TimeAmount {
    init(_ duration: Duration) {
        let (seconds, attoseconds) = duration.components
        self = .nanoseconds(seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
    }
}
