import Foundation
import Settings
import TLSTestSupport
import TestSupport
import Testing
import UnicacheApp

/// CONTRACT §8.9: secrets stay out of reach — the admin token from a file off the command line, and a TLS key or
/// admin token file that its group or others may read stops start-up, as a key ring does.
@Suite("Secret files", .timeLimit(.minutes(1)))
struct SecretFileOptionTests {
    @Test(arguments: [("s3cret\n", 0o600), ("s3cret", 0o400), ("s3cret\r\n", 0o600)])
    func theAdminTokenComesFromAFileWithoutItsNewline(contents: String, mode: Int) throws {
        try withSecretFile(contents, mode: mode, name: "admin-token") { path in
            let flag = try UnicacheConfiguration.parse(arguments: ["--admin-token-file", path], environment: [:])
            #expect(flag.admin.token == "s3cret")
            let variable = try UnicacheConfiguration.parse(arguments: [], environment: ["UNICACHE_ADMIN_TOKEN_FILE": path])
            #expect(variable.admin.token == "s3cret")
        }
    }

    @Test func aBadAdminTokenFileStopsStartUpNamingTheFlag() throws {
        let (folder, path) = try secretFile("s3cret\n", mode: 0o644, name: "admin-token")
        defer { folder.remove() }
        let open = configurationError(["--admin-token-file", path])
        #expect(open.hasPrefix("--admin-token-file: "))
        #expect(open.contains("has mode 644"))
        #expect(open.contains("chmod 600"))
        #expect(!open.contains("s3cret"))
        #expect(configurationError(["--admin-token-file", folder.file("none")]).hasPrefix("--admin-token-file: "))
        try withSecretFile("\n", mode: 0o600, name: "blank") { blank in
            #expect(configurationError(["--admin-token-file", blank]).hasPrefix("--admin-token-file: the token is empty"))
        }
        try withSecretFile("two words\n", mode: 0o600, name: "spaced") { spaced in
            #expect(!configurationError(["--admin-token-file", spaced]).contains("two words"))
        }
    }

    @Test func aTokenAndATokenFileTogetherStopStartUp() throws {
        try withSecretFile("s3cret\n", mode: 0o600, name: "admin-token") { path in
            let both = configurationError(["--admin-token", "other", "--admin-token-file", path])
            #expect(both.hasPrefix("--admin-token-file: given with --admin-token"))
            #expect(configurationError([], ["UNICACHE_ADMIN_TOKEN": "other", "UNICACHE_ADMIN_TOKEN_FILE": path])
                .hasPrefix("UNICACHE_ADMIN_TOKEN_FILE: given with UNICACHE_ADMIN_TOKEN"))
        }
    }

    @Test(arguments: [0o644, 0o640, 0o604, 0o660])
    func aTLSKeyOthersMayReadStopsStartUp(mode: Int) throws {
        let pair = try TestCertificate().write()
        defer { pair.folder.remove() }
        #expect(configurationError(["--tls-cert", pair.certificate, "--tls-key", pair.key]) == "")
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: pair.key)
        let message = configurationError(["--tls-cert", pair.certificate, "--tls-key", pair.key])
        #expect(message.hasPrefix("--tls-key: "))
        #expect(message.contains("has mode \(String(mode, radix: 8))"))
        #expect(message.contains("chmod 600"))
        #expect(!message.contains("PRIVATE KEY"))
        try FileManager.default.setAttributes([.posixPermissions: 0o400], ofItemAtPath: pair.key)
        #expect(configurationError(["--tls-cert", pair.certificate, "--tls-key", pair.key]) == "")
    }
}
