import Crypto
import Foundation
import X509

/// A test certificate authority and what it signs, as PEM files in a temporary folder: the server's certificate
/// names `localhost` only (an address is verified through an explicit server name).
public struct TestPKI: Sendable {
    public let folder: URL
    public let caFile: String
    private let caKey: P256.Signing.PrivateKey
    private let caName: DistinguishedName

    public init(folder: URL, name: String = "unicache test CA") throws {
        self.folder = folder
        caKey = P256.Signing.PrivateKey()
        caName = try DistinguishedName { CommonName(name) }
        let now = Date()
        let ca = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(caKey.publicKey),
            notValidBefore: now - 3600, notValidAfter: now + 86_400, issuer: caName, subject: caName,
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.isCertificateAuthority(maxPathLength: nil))
                Critical(KeyUsage(keyCertSign: true, cRLSign: true))
            },
            issuerPrivateKey: .init(caKey))
        caFile = try Self.write(try ca.serializeAsPEM().pemString, to: folder.appendingPathComponent("\(UUID().uuidString)-ca.pem"))
    }

    /// A leaf certificate signed by this CA and its key, as files: (certificate, key).
    public func issue(
        commonName: String = "localhost", dnsNames: [String] = ["localhost"],
        notValidBefore: Date = Date() - 3600, notValidAfter: Date = Date() + 86_400, client: Bool = false
    ) throws -> (certificate: String, key: String) {
        let key = P256.Signing.PrivateKey()
        let names = dnsNames.map { GeneralName.dnsName($0) }
        let certificate = try Certificate(
            version: .v3, serialNumber: Certificate.SerialNumber(), publicKey: .init(key.publicKey),
            notValidBefore: notValidBefore, notValidAfter: notValidAfter, issuer: caName,
            subject: try DistinguishedName { CommonName(commonName) },
            signatureAlgorithm: .ecdsaWithSHA256,
            extensions: try Certificate.Extensions {
                Critical(BasicConstraints.notCertificateAuthority)
                Critical(KeyUsage(digitalSignature: true))
                try ExtendedKeyUsage([client ? .clientAuth : .serverAuth])
                SubjectAlternativeNames(names)
            },
            issuerPrivateKey: .init(caKey))
        let stem = folder.appendingPathComponent(UUID().uuidString)
        let certificateFile = try Self.write(try certificate.serializeAsPEM().pemString, to: stem.appendingPathExtension("crt"))
        let keyFile = try Self.write(key.pemRepresentation, to: stem.appendingPathExtension("key"))
        return (certificateFile, keyFile)
    }

    private static func write(_ pem: String, to url: URL) throws -> String {
        guard FileManager.default.createFile(
            atPath: url.path, contents: Data((pem + "\n").utf8), attributes: [.posixPermissions: 0o600])
        else { throw CocoaError(.fileWriteUnknown) }
        return url.path
    }
}

extension RedisServerProcess {
    /// A redis-server with only a TLS port (the plain one off), its certificate `certificate` from `pki`, clients
    /// verified against `pki` when `authClients`.
    public static func startTLS(
        pki: TestPKI, certificate: (certificate: String, key: String), authClients: Bool, password: String? = nil,
        extraArguments: [String] = []
    ) async throws -> RedisServerProcess {
        try await start(password: password) { port in
            standardArguments(port: port, password: password) + [
                "--port", "0", "--tls-port", String(port), "--tls-cert-file", certificate.certificate,
                "--tls-key-file", certificate.key, "--tls-ca-cert-file", pki.caFile,
                "--tls-auth-clients", authClients ? "yes" : "no",
            ] + extraArguments
        }
    }
}
