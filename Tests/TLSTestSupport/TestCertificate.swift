import Crypto
import Foundation
import TestSupport
import X509

/// A self-signed certificate for `localhost` and its key, made in-process (ECDSA P-256, valid from an hour ago
/// for a day), as PEM.
public struct TestCertificate: Sendable {
    public let certificatePEM: String
    public let privateKeyPEM: String

    public init(commonName: String = "localhost") throws {
        let key = P256.Signing.PrivateKey()
        let name = try DistinguishedName { CommonName(commonName) }
        let certificate = try Self.certificate(
            subject: name, key: key, issuer: name, issuerKey: key,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                SubjectAlternativeNames([.dnsName("localhost")])
            })
        certificatePEM = try certificate.serializeAsPEM().pemString + "\n"
        privateKeyPEM = key.pemRepresentation + "\n"
    }

    /// Writes the certificate and key as `cert.pem` and `key.pem` (mode 0600) into a new temporary folder.
    public func write() throws -> (folder: TemporaryFolder, certificate: String, key: String) {
        let folder = try TemporaryFolder("unicache-tls")
        let certificate = folder.url.appendingPathComponent("cert.pem")
        let key = folder.url.appendingPathComponent("key.pem")
        try Data(certificatePEM.utf8).write(to: certificate)
        try Self.writeSecret(privateKeyPEM, to: key)
        return (folder, certificate.path, key.path)
    }

    /// A test certificate authority and what it signs, as PEM files in a folder: the server's certificate names
    /// `localhost` only (an address is verified through an explicit server name).
    public struct Authority: Sendable {
        public let folder: URL
        public let caFile: String
        private let caKey: P256.Signing.PrivateKey
        private let caName: DistinguishedName

        public init(folder: URL, name: String = "unicache test CA") throws {
            self.folder = folder
            caKey = P256.Signing.PrivateKey()
            caName = try DistinguishedName { CommonName(name) }
            let ca = try TestCertificate.certificate(
                subject: caName, key: caKey, issuer: caName, issuerKey: caKey,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                    Critical(KeyUsage(keyCertSign: true, cRLSign: true))
                })
            caFile = try TestCertificate.writeSecret(
                try ca.serializeAsPEM().pemString + "\n", to: folder.appendingPathComponent("\(UUID().uuidString)-ca.pem"))
        }

        /// A leaf certificate signed by this CA and its key, as files: (certificate, key). `ipAddresses`: IP entries
        /// of its subject alternative names (4 or 16 bytes each).
        public func issue(
            commonName: String = "localhost", dnsNames: [String] = ["localhost"], ipAddresses: [[UInt8]] = [],
            notValidBefore: Date = Date() - 3600, notValidAfter: Date = Date() + 86_400, client: Bool = false
        ) throws -> (certificate: String, key: String) {
            let key = P256.Signing.PrivateKey()
            let certificate = try TestCertificate.certificate(
                subject: try DistinguishedName { CommonName(commonName) }, key: key, issuer: caName, issuerKey: caKey,
                notValidBefore: notValidBefore, notValidAfter: notValidAfter,
                extensions: try Certificate.Extensions {
                    Critical(BasicConstraints.notCertificateAuthority)
                    Critical(KeyUsage(digitalSignature: true))
                    try ExtendedKeyUsage([client ? .clientAuth : .serverAuth])
                    SubjectAlternativeNames(
                        dnsNames.map { GeneralName.dnsName($0) }
                            + ipAddresses.map { GeneralName.ipAddress(.init(contentBytes: $0[...])) })
                })
            let stem = folder.appendingPathComponent(UUID().uuidString)
            let certificateFile = try TestCertificate.writeSecret(
                try certificate.serializeAsPEM().pemString + "\n", to: stem.appendingPathExtension("crt"))
            let keyFile = try TestCertificate.writeSecret(key.pemRepresentation + "\n", to: stem.appendingPathExtension("key"))
            return (certificateFile, keyFile)
        }
    }

    /// A certificate for `subject`'s `key`, signed by `issuerKey` (ECDSA with SHA-256, v3, a fresh serial).
    static func certificate(
        subject: DistinguishedName, key: P256.Signing.PrivateKey, issuer: DistinguishedName,
        issuerKey: P256.Signing.PrivateKey, notValidBefore: Date = Date() - 3600, notValidAfter: Date = Date() + 86_400,
        extensions: Certificate.Extensions
    ) throws -> Certificate {
        try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(key.publicKey),
            notValidBefore: notValidBefore, notValidAfter: notValidAfter, issuer: issuer, subject: subject,
            signatureAlgorithm: .ecdsaWithSHA256, extensions: extensions, issuerPrivateKey: .init(issuerKey))
    }

    /// Writes `pem` to `url` with mode 0600; returns the path.
    @discardableResult
    static func writeSecret(_ pem: String, to url: URL) throws -> String {
        guard FileManager.default.createFile(atPath: url.path, contents: Data(pem.utf8), attributes: [.posixPermissions: 0o600])
        else { throw CocoaError(.fileWriteUnknown) }
        return url.path
    }
}
