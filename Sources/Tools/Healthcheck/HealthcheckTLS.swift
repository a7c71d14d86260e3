import NIOCore
import NIOPosix
import NIOSSL

/// How `unicache healthcheck` speaks to a service that runs with `--tls-cert`: HTTPS (swift-nio-ssl) over the
/// socket `ClientSocket` connected, accepting exactly one certificate, the leaf of the service's own `--tls-cert`.
///
/// It is a liveness probe of the local process, usually on loopback, where a certificate's name (a public DNS
/// name) never matches the address dialled and a self-signed one chains to no trusted root. So instead of chain
/// and name checks it pins the certificate: the handshake succeeds only if the peer holds the private key of the
/// very certificate the service was given (TLS proves possession), whoever issued it, self-signed or not, and
/// whatever its dates (an expired certificate is an operator's alarm, not a dead process).
public struct HealthcheckTLS: Sendable, Equatable {
    /// DER of the one certificate accepted.
    package let pinnedCertificateDER: [UInt8]

    /// The leaf (first certificate) of a PEM chain; `nil` when the text holds no certificate.
    public init?(certificateChainPEM: String) {
        guard let leaf = try? NIOSSLCertificate.fromPEMBytes(Array(certificateChainPEM.utf8)).first,
            let der = try? leaf.toDERBytes()
        else { return nil }
        pinnedCertificateDER = der
    }

    /// Sends `request` over TLS on `socket` (which it takes over and closes) and returns what arrived until
    /// `marker` or the peer's close, within `deadline`: at most `limit` bytes with a marker, else more than `limit`
    /// is an error (a whole answer, as `ClientSocket.receiveAll` reads one).
    func exchange(
        on socket: ClientSocket, request: [UInt8], until marker: [UInt8]?, limit: Int, deadline: ContinuousClock.Instant
    ) throws(HealthcheckError) -> [UInt8] {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let pinned = pinnedCertificateDER
        let received = loop.makePromise(of: [UInt8].self)
        let channel: any Channel
        do {
            var configuration = TLSConfiguration.makeClientConfiguration()
            configuration.minimumTLSVersion = .tlsv12
            // The pin replaces chain and name checks (NIOSSL would still match a name after the callback).
            configuration.certificateVerification = .noHostnameVerification
            let context = try NIOSSLContext(configuration: configuration)
            channel = try ClientBootstrap(group: loop)
                .channelInitializer { channel in
                    channel.eventLoop.makeCompletedFuture {
                        // Replaces chain and name verification (see the type's comment).
                        let handler = try NIOSSLClientHandler(context: context, serverHostname: nil) { peer, verdict in
                            let leaf = peer.first.flatMap { try? $0.toDERBytes() }
                            verdict.succeed(leaf == pinned ? .certificateVerified : .failed)
                        }
                        try channel.pipeline.syncOperations.addHandler(handler)
                        try channel.pipeline.syncOperations.addHandler(
                            AnswerReader(marker: marker, limit: limit, received: received))
                    }
                }
                .withConnectedSocket(socket.fileDescriptor).wait()
        } catch {
            socket.close()
            throw .tls(Self.reason(error))
        }
        let left = ContinuousClock.now.duration(to: deadline)
        let timer = channel.eventLoop.scheduleTask(in: .nanoseconds(Int64(left / .nanoseconds(1)))) {
            received.fail(HealthcheckError.timeout)
        }
        // NIOSSL holds the request until the handshake is done.
        channel.writeAndFlush(ByteBuffer(bytes: request), promise: nil)
        defer {
            timer.cancel()
            channel.close(promise: nil)
        }
        do {
            return try received.futureResult.wait()
        } catch let error as HealthcheckError {
            throw error
        } catch {
            throw .tls(Self.reason(error))
        }
    }

    /// Why a handshake failed, in words and BoringSSL's reason codes: its own text names the build paths of its
    /// source files (`… at /…/handshake.cc:320`), which say nothing to an operator.
    static func reason(_ error: any Error) -> String {
        let text = "\(error)"
        let codes = text.components(separatedBy: "OPENSSL_internal:").dropFirst().map { part in
            String(part.prefix { $0 != " " && $0 != "]" && $0 != ")" })
        }
        if codes.contains("CERTIFICATE_VERIFY_FAILED") {
            return "the service showed another certificate than the one given (--tls-cert): not this service's, or "
                + "the service's certificate was replaced"
        }
        if codes.contains("WRONG_VERSION_NUMBER") { return "the port does not speak TLS" }
        if !codes.isEmpty { return "the handshake failed (\(codes.joined(separator: ", ")))" }
        if let ssl = error as? NIOSSLError, case .uncleanShutdown = ssl {
            return "the connection closed during the handshake"
        }
        return text
    }
}

/// Collects the answer for `HealthcheckTLS.exchange` (its head up to a marker, or all of it); on the channel's event
/// loop only.
private final class AnswerReader: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer

    let marker: [UInt8]?
    let limit: Int
    let received: EventLoopPromise<[UInt8]>
    var bytes: [UInt8] = []

    init(marker: [UInt8]?, limit: Int, received: EventLoopPromise<[UInt8]>) {
        self.marker = marker
        self.limit = limit
        self.received = received
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        bytes += unwrapInboundIn(data).readableBytesView
        guard let marker else {
            if bytes.count > limit {
                received.fail(HealthcheckError.io("answer larger than \(limit) bytes"))
                context.close(promise: nil)
            }
            return
        }
        if bytes.count >= limit || ClientSocket.contains(bytes, marker) { received.succeed(bytes) }
    }

    func channelInactive(context: ChannelHandlerContext) {
        received.succeed(bytes)
    }

    func errorCaught(context: ChannelHandlerContext, error: any Error) {
        received.fail(HealthcheckError.tls(HealthcheckTLS.reason(error)))
        context.close(promise: nil)
    }
}
