import Foundation
import Redis
import RedisTestSupport
import Settings
import Testing
import TestSupport
import TLSTestSupport
import UnicacheApp

/// CONTRACT §10.1's flags: each file read at start-up (the key refused when its group or others may read it), the
/// pair given together, and none of them without a `rediss://` URL; each error one line naming the flag.
@Suite("The Redis TLS flags") struct RedisTLSConfigurationTests {
    static func parse(_ arguments: [String], environment: [String: String] = [:]) throws -> UnicacheConfiguration {
        try UnicacheConfiguration.parse(arguments: arguments, environment: environment)
    }

    static func message(_ arguments: [String], environment: [String: String] = [:]) -> String {
        do {
            _ = try parse(arguments, environment: environment)
            return "no error"
        } catch {
            return (error as? ConfigurationError)?.message ?? "\(error)"
        }
    }

    @Test func theFilesAreCheckedAndEachErrorNamesItsFlag() throws {
        let folder = try TemporaryFolder("unicache-redis-tls-flags")
        defer { folder.remove() }
        let pki = try TestCertificate.Authority(folder: folder.url)
        let client = try pki.issue(commonName: "unicache", dnsNames: [], client: true)
        let url = "rediss://app:s3cret@10.0.0.5:6380"

        let configuration = try Self.parse([
            "--redis", url, "--redis-tls-ca", pki.caFile, "--redis-tls-server-name", "redis.internal",
            "--redis-tls-cert", client.certificate, "--redis-tls-key", client.key,
        ])
        #expect(configuration.shared.redis?.tls == RedisTLSOptions(
            caFile: pki.caFile, serverName: "redis.internal", certificateFile: client.certificate, keyFile: client.key))
        #expect(configuration.shared.redis?.description == "rediss://app:***@10.0.0.5:6380/0")
        // The environment names work too; rediss:// alone verifies against the system's trust store.
        let fromEnvironment = try Self.parse([], environment: ["UNICACHE_REDIS": url, "UNICACHE_REDIS_TLS_CA": pki.caFile])
        #expect(fromEnvironment.shared.redis?.tls == RedisTLSOptions(caFile: pki.caFile))
        #expect(try Self.parse(["--redis", url]).shared.redis?.tls == RedisTLSOptions())

        let withoutTLS = Self.message(["--redis", "redis://10.0.0.5", "--redis-tls-ca", pki.caFile])
        #expect(withoutTLS.hasPrefix("--redis-tls-ca: ") && withoutTLS.contains("rediss://"), "\(withoutTLS)")
        let environmentWithoutTLS = Self.message([], environment: ["UNICACHE_REDIS_TLS_SERVER_NAME": "redis.internal"])
        #expect(environmentWithoutTLS.hasPrefix("UNICACHE_REDIS_TLS_SERVER_NAME: "), "\(environmentWithoutTLS)")

        let alone = Self.message(["--redis", url, "--redis-tls-cert", client.certificate])
        #expect(alone.hasPrefix("--redis-tls-cert: ") && alone.contains("--redis-tls-key"), "\(alone)")

        let openKey = folder.url.appendingPathComponent("open.key").path
        try FileManager.default.copyItem(atPath: client.key, toPath: openKey)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: openKey)
        let readable = Self.message(["--redis", url, "--redis-tls-cert", client.certificate, "--redis-tls-key", openKey])
        #expect(readable.hasPrefix("--redis-tls-key: ") && readable.contains("mode 644"), "\(readable)")
        #expect(!readable.contains("PRIVATE KEY"))

        let missing = Self.message(["--redis", url, "--redis-tls-ca", folder.url.appendingPathComponent("none.pem").path])
        #expect(missing.hasPrefix("--redis-tls-ca: "), "\(missing)")
        let notPEM = folder.url.appendingPathComponent("not.pem").path
        try Data("not a certificate".utf8).write(to: URL(fileURLWithPath: notPEM))
        let garbage = Self.message(["--redis", url, "--redis-tls-ca", notPEM])
        #expect(garbage.hasPrefix("--redis-tls-ca: "), "\(garbage)")
        #expect(!garbage.contains("s3cret") && !readable.contains("s3cret") && !alone.contains("s3cret"))
    }
}
