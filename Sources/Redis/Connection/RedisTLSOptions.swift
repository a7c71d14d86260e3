import NIOCore
import NIOSSL

/// TLS to Redis (`rediss://`): TLS 1.2 or 1.3, the certificate verified against `caFile` (or the system's trust
/// store) and the host name (or `serverName`). There is no option to skip verification and no plaintext fallback.
public struct RedisTLSOptions: Sendable, Hashable {
    /// PEM CA bundle; nil: the system's trust store.
    public var caFile: String?
    /// The name sent (SNI) and verified; nil: the URL's host. An IP address is never sent as SNI: without this
    /// override the certificate must name the address itself (an IP subject alternative name). Given, it is the only
    /// name verified: an IP entry matching the connected address does not stand in for it.
    public var serverName: String?
    /// A client certificate chain and its key (PEM), for `tls-auth-clients yes`.
    public var certificateFile: String?
    public var keyFile: String?

    public init(caFile: String? = nil, serverName: String? = nil, certificateFile: String? = nil, keyFile: String? = nil) {
        self.caFile = caFile
        self.serverName = serverName
        self.certificateFile = certificateFile
        self.keyFile = keyFile
    }

    /// Reads the CA bundle and the client certificate and key as a connection will, so that a wrong file shows at
    /// start-up rather than at the first connect.
    public func validate() throws(RedisError) {
        _ = try makeContext()
    }

    /// The client context: the chain verified against the trust roots, the client certificate if any. The host name
    /// is verified by NIOSSL too unless `serverName` is given: NIOSSL would also accept an IP entry that matches the
    /// connected address, so a given name is verified by `handler(context:for:)` alone, as that name.
    func makeContext() throws(RedisError) -> NIOSSLContext {
        var configuration = TLSConfiguration.makeClientConfiguration()
        configuration.minimumTLSVersion = .tlsv12
        configuration.certificateVerification = serverName == nil ? .fullVerification : .noHostnameVerification
        if let caFile { configuration.trustRoots = .file(caFile) }
        switch (certificateFile, keyFile) {
        case (nil, nil): break
        case (let certificateFile?, let keyFile?):
            do {
                configuration.certificateChain = try NIOSSLCertificate.fromPEMFile(certificateFile).map { .certificate($0) }
                configuration.privateKey = .privateKey(try NIOSSLPrivateKey(file: keyFile, format: .pem))
            } catch {
                throw .tls("cannot read the client certificate \(certificateFile) or its key \(keyFile): \(error)")
            }
        default:
            throw .tls("a client certificate needs both a certificate file and a key file")
        }
        do {
            return try NIOSSLContext(configuration: configuration)
        } catch {
            throw .tls("cannot load the trust roots \(caFile ?? "(system)"): \(error)")
        }
    }

    /// What to send as SNI and verify for `host`: the override, else the host unless it is an IP address.
    func serverHostname(for host: String) -> String? {
        if let serverName { return serverName }
        return (try? SocketAddress(ipAddress: host, port: 0)) == nil ? host : nil
    }
}
