import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

extension RedisConnection {
    /// Connects to `address` (default: the endpoint's node), completes TLS, sends AUTH and SELECT (or PING).
    /// `timeout` is the default bound of a command; `connectTimeout` (default: 2 s) bounds the connect with TLS and the
    /// handshake. Throws `.errorReply` when AUTH or SELECT is refused (`WRONGPASS`, `NOAUTH`, `NOPERM`), `.tls` saying
    /// which check failed, `.connectFailed` in a few words.
    public static func connect(
        _ endpoint: RedisEndpoint, at address: RedisEndpoint.Address? = nil, timeout: Duration = .milliseconds(50),
        connectTimeout: Duration = .seconds(2), limits: RESPLimits = RESPLimits(),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "unicache.redis")
    ) async throws(RedisError) -> RedisConnection {
        let settings = Settings(
            endpoint: endpoint, address: address ?? endpoint.address, timeout: timeout, connectTimeout: connectTimeout,
            limits: limits)
        return try await open(settings, eventLoopGroup: eventLoopGroup, logger: logger)
    }

    /// A connection made and through its handshake. With `onMessage`, a subscription's: pub/sub messages go there
    /// (not to a command), and `onClose` is called when the connection ends.
    static func open(
        _ settings: Settings, eventLoopGroup: any EventLoopGroup, logger: Logger,
        onMessage: (@Sendable (RedisPubSubMessage) -> Void)? = nil, onClose: (@Sendable () -> Void)? = nil
    ) async throws(RedisError) -> RedisConnection {
        let closeReason = NIOLockedValueBox<RedisError?>(nil)
        let channel = try await makeChannel(settings, eventLoopGroup: eventLoopGroup) {
            RedisCommandHandler(
                limits: settings.limits, closeReason: closeReason, onMessage: onMessage, onClose: onClose)
        }
        let connection = RedisConnection(settings: settings, channel: channel, closeReason: closeReason)
        try await connection.handshake(logger: logger, eventLoopGroup: eventLoopGroup)
        return connection
    }

    /// AUTH and SELECT (or PING) on the new connection, bounded by the connect timeout. A refusal is thrown as the
    /// `.errorReply` of the command it answered (a refused AUTH without Redis's text); any other failure is explained
    /// (which TLS check failed). The connection is closed when this throws.
    func handshake(logger: Logger, eventLoopGroup: any EventLoopGroup) async throws(RedisError) {
        let commands = settings.endpoint.handshake
        let replies: [RedisReply]
        do {
            replies = try await send(commands, timeout: settings.connectTimeout)
        } catch {
            await close()
            throw await Self.explained(error, settings, eventLoopGroup: eventLoopGroup)
        }
        for (command, reply) in zip(commands, replies) {
            guard let refused = reply.errorReply else { continue }
            let error = refused.answering(command.name)
            await close()
            logger.debug("Redis refused the connection's handshake", metadata: [
                "redis": "\(settings.endpoint)", "node": "\(settings.address)", "error": "\(error)",
            ])
            throw .errorReply(error)
        }
    }

    /// A TCP (or TLS) channel to the node with `handler()` (which decodes the replies) in its pipeline.
    static func makeChannel(
        _ settings: Settings, eventLoopGroup: any EventLoopGroup, handler: @escaping @Sendable () -> RedisCommandHandler
    ) async throws(RedisError) -> any Channel {
        let tls = try settings.endpoint.tls.map { options throws(RedisError) in
            (options: options, context: try options.makeContext())
        }
        let (host, port) = (settings.address.host, settings.address.port)
        let bootstrap = ClientBootstrap(group: eventLoopGroup)
            .connectTimeout(TimeAmount(settings.connectTimeout))
            .channelOption(.socketOption(.so_keepalive), value: 1)
            .channelOption(.tcpOption(.tcp_nodelay), value: 1)
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let pipeline = channel.pipeline.syncOperations
                    if let tls {
                        try pipeline.addHandler(tls.options.handler(context: tls.context, for: host))
                    }
                    try pipeline.addHandler(handler())
                }
            }
        do {
            // An address is connected to directly: no resolver, no Happy Eyeballs delay, a refusal seen at once.
            if let address = try? SocketAddress(ipAddress: host, port: port) {
                return try await bootstrap.connect(to: address).get()
            }
            return try await bootstrap.connect(host: host, port: port).get()
        } catch let error as RedisError {
            throw error
        } catch {
            throw .connectFailed(connectFailureReason(error, timeout: settings.connectTimeout))
        }
    }

    /// A failed handshake's error, with the TLS reason made specific (expired, not yet valid, untrusted, wrong name).
    static func explained(_ error: RedisError, _ settings: Settings, eventLoopGroup: any EventLoopGroup) async -> RedisError {
        guard let options = settings.endpoint.tls else { return error }
        // TLS 1.3: the client's handshake is done before the server checks the client's certificate, so a refused
        // one shows as the server closing the connection before it answers AUTH or PING.
        if error == .connectionClosed {
            return .tls("the server closed the connection during the handshake (it refused the client certificate, or wants one)")
        }
        guard case .tls(let reason) = error else { return error }
        let host = settings.address.host
        if reason.contains("ailedToValidateHostname") || reason.contains("Couldn't find") {
            return .tls("the certificate does not name \(options.serverHostname(for: host) ?? host) (wrong name)")
        }
        guard reason.contains("CERTIFICATE_VERIFY_FAILED") else { return error }
        guard let certificate = await RedisTLSDiagnosis.peerCertificate(settings, eventLoopGroup: eventLoopGroup)
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
