import NIOCore
import NIOSSL
import X509

extension RedisTLSOptions {
    /// The TLS handler of a connection to `host`. With `serverName` given, the handshake completes (and AUTH is sent)
    /// only once the certificate, whose chain BoringSSL verified, names `serverName` itself in a DNS entry.
    func handler(context: NIOSSLContext, for host: String) throws -> NIOSSLClientHandler {
        guard let serverName else { return try NIOSSLClientHandler(context: context, serverHostname: serverHostname(for: host)) }
        // NIOSSL's only hook between a verified chain and the handshake's end (underscored: pinned by Package.resolved).
        return try NIOSSLClientHandler._makeSSLClientHandler(context: context, serverHostname: serverName) { certificate, channel in
            guard Self.certificate(certificate, names: serverName) else {
                return channel.eventLoop.makeFailedFuture(
                    RedisError.tls("the certificate does not name \(serverName) (wrong name)"))
            }
            return channel.eventLoop.makeSucceededVoidFuture()
        }
    }

    /// Whether the certificate's DNS subject alternative names include `name` (RFC 6125: case-insensitive, a trailing
    /// dot ignored, `*` as the whole left-most label matching one label). Its IP entries and common name do not count.
    static func certificate(_ certificate: NIOSSLCertificate, names name: String) -> Bool {
        guard let parsed = try? Certificate(derEncoded: certificate.toDERBytes()),
            let entries = try? parsed.extensions.subjectAlternativeNames
        else { return false }
        let wanted = normalized(name)
        return entries.contains { entry in
            guard case .dnsName(let dnsName) = entry else { return false }
            let given = normalized(dnsName)
            if given == wanted { return true }
            guard given.hasPrefix("*."), !given.dropFirst().contains("*"), let dot = wanted.firstIndex(of: "."),
                dot != wanted.startIndex
            else { return false }
            return wanted[dot...] == given.dropFirst()
        }
    }

    private static func normalized(_ name: String) -> String {
        let lowered = name.lowercased()
        return lowered.hasSuffix(".") ? String(lowered.dropLast()) : lowered
    }
}
