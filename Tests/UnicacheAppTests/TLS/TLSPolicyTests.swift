import Foundation
import TestSupport
import Testing

/// CONTRACT §8.9: TLS 1.2 offers only ECDHE key exchange with AEAD ciphers and no SHA-1 signatures; TLS 1.3 as
/// GnuTLS offers it. Told by OpenSSL's own client against an RSA certificate (with which static-RSA key exchange
/// would be possible at all), each refused case allowed on the client's side (`@SECLEVEL=0`).
@Suite(.serialized, .timeLimit(.minutes(3)), .executableBuilt)
struct TLSPolicyTests {
    static let openssl = URL(fileURLWithPath: "/usr/bin/openssl")

    func handshake(_ port: Int, _ options: [String]) async throws -> ChildProcess {
        try await ChildProcess.run(
            Self.openssl, ["s_client", "-connect", "127.0.0.1:\(port)", "-servername", "localhost"] + options + ["-ign_eof"],
            environment: ["PATH": "/usr/bin:/bin"], standardInput: "GET /healthz HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n")
    }

    @Test func onlyECDHEWithAEADAndNoSHA1Signatures() async throws {
        let folder = try TemporaryFolder("tls-policy")
        defer { folder.remove() }
        let key = folder.file("key.pem")
        let certificate = folder.file("cert.pem")
        let made = try await ChildProcess.run(Self.openssl, [
            "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", key, "-out", certificate, "-days", "2",
            "-subj", "/CN=localhost", "-addext", "subjectAltName=DNS:localhost,IP:127.0.0.1",
        ])
        #expect(made.status == 0, "\(made.standardError)")
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: key)
        var service = try await ExecutableTests.Service.start(
            ["--tls-cert", certificate, "--tls-key", key, "--header-timeout", "120s"])
        defer { if service.process.isRunning { kill(service.process.processIdentifier, SIGKILL) } }  // a test that threw
        let port = try #require(service.port, "no start-up line in: \(service.log)")

        let refused: [[String]] = [
            ["-tls1_2", "-cipher", "AES128-SHA:@SECLEVEL=0"],  // static RSA, CBC, SHA-1
            ["-tls1_2", "-cipher", "AES256-GCM-SHA384:@SECLEVEL=0"],  // static RSA with AEAD
            ["-tls1_2", "-cipher", "ECDHE-RSA-AES128-SHA:@SECLEVEL=0"],  // ECDHE with CBC and SHA-1
            ["-tls1_2", "-cipher", "ECDHE-RSA-AES128-SHA256:@SECLEVEL=0"],  // ECDHE with CBC
            ["-tls1_2", "-cipher", "DHE-RSA-AES128-GCM-SHA256:@SECLEVEL=0"],  // finite-field DHE
            ["-tls1_2", "-cipher", "ECDHE-RSA-AES128-GCM-SHA256:@SECLEVEL=0", "-sigalgs", "RSA+SHA1"],
        ]
        for options in refused {
            let result = try await handshake(port, options)
            #expect(result.status != 0, "accepted: \(options)")
            #expect(!result.standardOutput.contains("HTTP/1.1 200"), "\(options)")
        }
        let accepted: [([String], String)] = [
            (["-tls1_2", "-cipher", "ECDHE-RSA-AES128-GCM-SHA256"], "ECDHE-RSA-AES128-GCM-SHA256"),
            (["-tls1_2", "-cipher", "ECDHE-RSA-AES256-GCM-SHA384"], "ECDHE-RSA-AES256-GCM-SHA384"),
            (["-tls1_2", "-cipher", "ECDHE-RSA-CHACHA20-POLY1305"], "ECDHE-RSA-CHACHA20-POLY1305"),
            (["-tls1_3"], "TLS_"),
        ]
        for (options, cipher) in accepted {
            let result = try await handshake(port, options)
            #expect(result.status == 0, "refused: \(options): \(result.standardError)")
            #expect(result.standardOutput.contains("HTTP/1.1 200"), "\(options)")
            #expect(result.standardOutput.contains(cipher), "\(options)")
        }
        #expect(await service.stop() == 0)
    }
}
