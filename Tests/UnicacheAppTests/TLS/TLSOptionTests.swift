import Foundation
@testable import Settings
import TestSupport
import TLSTestSupport
import Testing
import UnicacheApp

/// `--tls-cert` and `--tls-key` (CONTRACT §8.7): together or not at all; a missing, unreadable, malformed or
/// mismatched pair is one line naming the flag (or its variable), and never a byte of the key.
@Suite(.timeLimit(.minutes(2))) struct TLSOptionTests {
    /// A good pair, a second key, and garbage, as files in two temporary folders; `remove()` deletes them.
    struct Files {
        let folders: [TemporaryFolder]
        let certificate: String
        let key: String
        let otherKey: String
        let garbage: String
        let keyText: String

        init() throws {
            let pair = try TestCertificate()
            let written = try pair.write(), other = try TestCertificate().write()
            folders = [written.folder, other.folder]
            certificate = written.certificate
            key = written.key
            otherKey = other.key
            garbage = written.folder.file("garbage.pem")
            try Data("-----BEGIN CERTIFICATE-----\nbm9wZQ==\n-----END CERTIFICATE-----\n".utf8)
                .write(to: URL(fileURLWithPath: garbage))
            // Private as a key must be: what it holds is the case, not who may read it.
            try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: garbage)
            keyText = pair.privateKeyPEM
        }

        func remove() { folders.forEach { $0.remove() } }
    }

    @Test func bothFlagsOrBothVariablesServeHTTPS() throws {
        let files = try Files()
        defer { files.remove() }
        let byFlags = try UnicacheConfiguration.parse(
            arguments: ["--tls-cert", files.certificate, "--tls-key", files.key], environment: [:])
        #expect(byFlags.server.tls != nil)
        #expect(byFlags.logMetadata["tls"] == "on")
        let byVariables = try UnicacheConfiguration.parse(
            arguments: [], environment: ["UNICACHE_TLS_CERT": files.certificate, "UNICACHE_TLS_KEY": files.key])
        #expect(byVariables.server.tls == byFlags.server.tls)
        let plain = try UnicacheConfiguration.parse(arguments: [], environment: [:])
        #expect(plain.server.tls == nil)
        #expect(plain.logMetadata["tls"] == "off")
    }

    @Test func theHealthcheckReadsTheServiceCertificate() throws {
        let files = try Files()
        defer { files.remove() }
        let client = try HealthcheckOptions.parse([]).client(environment: ["UNICACHE_TLS_CERT": files.certificate])
        #expect(client.tls != nil)
        #expect(try HealthcheckOptions.parse([]).client(environment: [:]).tls == nil)
        for (arguments, prefix) in [
            (["--tls-cert", files.garbage], "--tls-cert: \"\(files.garbage)\" holds no PEM certificate"),
            (["--tls-cert", files.key], "--tls-cert: "), (["--tls-cert", "/nonexistent.pem"], "--tls-cert: cannot read"),
        ] {
            #expect {
                try HealthcheckOptions.parse(arguments).client(environment: [:])
            } throws: { error in
                guard let error = error as? ConfigurationError else { return false }
                return error.message.hasPrefix(prefix) && !error.message.contains("\n")
            }
        }
    }

    @Test func badPairsAreOneLineNamingTheFlag() throws {
        let files = try Files()
        defer { files.remove() }
        let missing = files.certificate + ".missing"
        let cases: [(arguments: [String], environment: [String: String], prefix: String)] = [
            (["--tls-cert", files.certificate], [:], "--tls-cert: given without --tls-key"),
            (["--tls-key", files.key], [:], "--tls-key: given without --tls-cert"),
            ([], ["UNICACHE_TLS_KEY": files.key], "UNICACHE_TLS_KEY: given without --tls-cert"),
            (["--tls-cert", missing, "--tls-key", files.key], [:], "--tls-cert: cannot read \"\(missing)\": there is no such file"),
            (["--tls-cert", files.certificate, "--tls-key", missing], [:], "--tls-key: cannot read"),
            (["--tls-cert", "/", "--tls-key", files.key], [:], "--tls-cert: cannot read \"/\": it is a directory"),
            (["--tls-cert", files.garbage, "--tls-key", files.key], [:], "--tls-cert: \"\(files.garbage)\" is not a PEM certificate chain"),
            (["--tls-cert", files.certificate, "--tls-key", files.garbage], [:], "--tls-key: \"\(files.garbage)\" is not an unencrypted PEM private key"),
            (["--tls-cert", files.certificate, "--tls-key", files.otherKey], [:], "--tls-key: \"\(files.otherKey)\" does not fit --tls-cert"),
            ([], ["UNICACHE_TLS_CERT": files.certificate, "UNICACHE_TLS_KEY": files.otherKey], "UNICACHE_TLS_KEY: "),
            // The key where the certificate belongs: the certificate is what is wrong.
            (["--tls-cert", files.key, "--tls-key", files.key], [:], "--tls-cert: "),
        ]
        for (arguments, environment, prefix) in cases {
            #expect {
                try UnicacheConfiguration.parse(arguments: arguments, environment: environment)
            } throws: { error in
                guard let error = error as? ConfigurationError else { return false }
                return error.message.hasPrefix(prefix) && !error.message.contains("\n")
                    && !error.message.contains("PRIVATE KEY") && !error.message.contains(files.keyText.dropFirst(40).prefix(20))
            }
        }
    }
}
