import CMicroHTTPDShim

/// A PEM certificate chain and its private key, checked as libmicrohttpd will load them: a server with them
/// speaks HTTPS only (TLS 1.3 and 1.2, through libmicrohttpd and GnuTLS).
///
/// Made only by `init`, which refuses a pair GnuTLS cannot load. The key is never shown: `description` names
/// neither it nor the certificate.
public struct TLSCredentials: Sendable, Equatable, CustomStringConvertible, CustomReflectable {
    public let certificateChainPEM: String
    let privateKeyPEM: String

    /// Checks the pair (the chain and key readable, the key the leaf certificate's).
    public init(certificateChainPEM: String, privateKeyPEM: String) throws(TLSCredentialsError) {
        let nul = "it holds a NUL byte; expected PEM text"
        if certificateChainPEM.utf8.contains(0) { throw .certificate(nul) }
        if privateKeyPEM.utf8.contains(0) { throw .privateKey(nul) }
        var reason = [CChar](repeating: 0, count: 256)
        let verdict = unicache_mhd_tls_check(certificateChainPEM, privateKeyPEM, &reason, reason.count)
        let text = String(decoding: reason.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
        switch Int(verdict) {
        case Int(UNICACHE_MHD_TLS_OK): break
        case Int(UNICACHE_MHD_TLS_BAD_CERTIFICATE): throw .certificate(text)
        case Int(UNICACHE_MHD_TLS_BAD_KEY): throw .privateKey(text)
        case Int(UNICACHE_MHD_TLS_MISMATCH): throw .mismatch(text)
        default: throw .unsupported(text)
        }
        self.certificateChainPEM = certificateChainPEM
        self.privateKeyPEM = privateKeyPEM
    }

    public var description: String { "TLSCredentials(certificate chain, private key)" }
    /// No children: a dump of a configuration shows neither file.
    public var customMirror: Mirror { Mirror(self, children: []) }
}

/// Why a certificate and key cannot serve TLS; each reason is GnuTLS's, never key material.
public enum TLSCredentialsError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The certificate chain is not PEM that GnuTLS reads, or holds no certificate.
    case certificate(String)
    /// The private key is not an unencrypted PEM key that GnuTLS reads.
    case privateKey(String)
    /// The key is not the certificate's.
    case mismatch(String)
    /// This libmicrohttpd (or GnuTLS) cannot serve TLS 1.2/1.3.
    case unsupported(String)

    public var description: String {
        switch self {
        case .certificate(let reason): "not a PEM certificate chain: \(reason)"
        case .privateKey(let reason): "not an unencrypted PEM private key: \(reason)"
        case .mismatch(let reason): "the private key does not belong to the certificate: \(reason)"
        case .unsupported(let reason):
            "this libmicrohttpd cannot serve TLS 1.2/1.3" + (reason.isEmpty ? " (built without TLS)" : ": \(reason)")
        }
    }
}
