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
        let now = Date()
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(key.publicKey),
            notValidBefore: now - 3600, notValidAfter: now + 86_400, issuer: name, subject: name,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                SubjectAlternativeNames([.dnsName("localhost")])
            },
            issuerPrivateKey: .init(key))
        certificatePEM = try certificate.serializeAsPEM().pemString + "\n"
        privateKeyPEM = key.pemRepresentation + "\n"
    }

    /// Writes the certificate and key as `cert.pem` and `key.pem` (mode 0600) into a new temporary folder.
    public func write() throws -> (folder: TemporaryFolder, certificate: String, key: String) {
        let folder = try TemporaryFolder("unicache-tls")
        let certificate = folder.url.appendingPathComponent("cert.pem")
        let key = folder.url.appendingPathComponent("key.pem")
        try Data(certificatePEM.utf8).write(to: certificate)
        guard FileManager.default.createFile(
            atPath: key.path, contents: Data(privateKeyPEM.utf8), attributes: [.posixPermissions: 0o600])
        else { throw CocoaError(.fileWriteUnknown) }
        return (folder, certificate.path, key.path)
    }
}
