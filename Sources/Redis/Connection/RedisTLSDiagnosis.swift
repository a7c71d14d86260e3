import NIOCore
import NIOPosix
import NIOSSL
import NIOTLS

/// Why a certificate did not verify: BoringSSL says only "certificate verify failed", so a second handshake that
/// verifies nothing reads the server's certificate to tell expired from untrusted. Only for the error message:
/// nothing is ever sent on that connection, and it is closed at once.
enum RedisTLSDiagnosis {
    static func peerCertificate(
        _ settings: RedisConnection.Settings, eventLoopGroup: any EventLoopGroup
    ) async -> NIOSSLCertificate? {
        var tls = TLSConfiguration.makeClientConfiguration()
        tls.certificateVerification = .none
        let options = settings.endpoint.tls
        if let certificateFile = options?.certificateFile, let keyFile = options?.keyFile,
            let chain = try? NIOSSLCertificate.fromPEMFile(certificateFile), let key = try? NIOSSLPrivateKey(file: keyFile, format: .pem)
        {
            // A server with tls-auth-clients yes would otherwise end the handshake before the certificate is read.
            tls.certificateChain = chain.map { .certificate($0) }
            tls.privateKey = .privateKey(key)
        }
        guard let context = try? NIOSSLContext(configuration: tls) else { return nil }
        let (host, port) = (settings.address.host, settings.address.port)
        let serverHostname = options?.serverHostname(for: host)
        let loop = eventLoopGroup.next()
        let handshake = loop.makePromise(of: Void.self)
        let bootstrap = ClientBootstrap(group: loop)
            .connectTimeout(TimeAmount(settings.connectTimeout))
            .channelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.addHandler(
                        NIOSSLClientHandler(context: context, serverHostname: serverHostname))
                    try channel.pipeline.syncOperations.addHandler(HandshakeWatcher(promise: handshake))
                }
            }
        guard let channel = try? await bootstrap.connect(host: host, port: port).get() else {
            handshake.fail(RedisError.connectionClosed)
            return nil
        }
        defer { channel.close(promise: nil) }
        let deadline = loop.scheduleTask(in: TimeAmount(settings.connectTimeout)) {
            handshake.fail(RedisError.timeout)
        }
        defer { deadline.cancel() }
        guard (try? await handshake.futureResult.get()) != nil else { return nil }
        return try? await channel.nioSSL_peerCertificate().get()
    }
}

/// Completes its promise when the TLS handshake has, fails it when the channel errs or closes first.
private final class HandshakeWatcher: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    let promise: EventLoopPromise<Void>

    init(promise: EventLoopPromise<Void>) { self.promise = promise }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        if case .handshakeCompleted = event as? TLSUserEvent { promise.succeed() }
        context.fireUserInboundEventTriggered(event)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        promise.fail(error)
    }

    func channelInactive(context: ChannelHandlerContext) {
        promise.fail(RedisError.connectionClosed)
        context.fireChannelInactive()
    }
}
