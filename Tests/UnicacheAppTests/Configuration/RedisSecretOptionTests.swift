import Clocks
import Foundation
import Logging
import Redis
import Settings
import TestSupport
import Testing
import TLSTestSupport
import UnifiedCache

@testable import UnicacheApp

/// The Redis link's secrets and trust at start-up: the password from a file off the command line, no core dump while
/// any Redis secret is held, a server name that is a name, and a warning when Sentinels are trusted unauthenticated.
@Suite("Redis secrets and trust at start-up", .timeLimit(.minutes(1)))
struct RedisSecretOptionTests {
    @Test(arguments: [("pa55 word\n", 0o600), ("pa55 word", 0o400), ("pa55 word\r\n", 0o600)])
    func theRedisPasswordComesFromAFileWithoutItsNewline(contents: String, mode: Int) throws {
        try withSecretFile(contents, mode: mode, name: "redis-password") { path in
            let flag = try UnicacheConfiguration.parse(
                arguments: ["--redis", "redis://app@10.0.0.5:6380/2", "--redis-password-file", path], environment: [:])
            #expect(flag.shared.redis?.password == "pa55 word")
            #expect(flag.shared.redis?.user == "app")
            #expect(flag.shared.redis?.description == "redis://app:***@10.0.0.5:6380/2")
            let variable = try UnicacheConfiguration.parse(
                arguments: [], environment: ["UNICACHE_REDIS": "redis-sentinel://s1,s2?master=m", "UNICACHE_REDIS_PASSWORD_FILE": path])
            #expect(variable.shared.redis?.password == "pa55 word")
            #expect(ProcessHardening.holdsSecrets(variable))
        }
    }

    @Test func aBadOrConflictingPasswordFileStopsStartUpNamingTheFlags() throws {
        let (folder, path) = try secretFile("pa55word\n", mode: 0o644, name: "redis-password")
        defer { folder.remove() }
        let open = configurationError(["--redis", "redis://10.0.0.5", "--redis-password-file", path])
        #expect(open.hasPrefix("--redis-password-file: ") && open.contains("has mode 644") && open.contains("chmod 600"), "\(open)")
        #expect(!open.contains("pa55word"))
        try FileManager.default.setAttributes([.posixPermissions: 0o600], ofItemAtPath: path)

        let both = configurationError(["--redis", "redis://:inline-pw@10.0.0.5", "--redis-password-file", path])
        #expect(both == "--redis-password-file: given with a password in --redis (choose one: the file keeps the password off the command line)")
        let bothFromEnvironment = configurationError([], ["UNICACHE_REDIS": "redis://u:inline-pw@h", "UNICACHE_REDIS_PASSWORD_FILE": path])
        #expect(bothFromEnvironment.hasPrefix("UNICACHE_REDIS_PASSWORD_FILE: given with a password in UNICACHE_REDIS"))
        #expect(configurationError(["--redis-password-file", path]).hasPrefix("--redis-password-file: given without a --redis URL"))
        // Without the file, a user still needs a password in the URL.
        #expect(configurationError(["--redis", "redis://app@h"]).contains("names a user without a password"))
        try withSecretFile("\n", mode: 0o600, name: "blank") { blank in
            #expect(configurationError(["--redis", "redis://h", "--redis-password-file", blank]).contains("is empty"))
        }
    }

    /// No core dump may carry a Redis secret out: a password (in the URL or from a file), a TLS client key, a
    /// Sentinel password; nothing of Redis's without one.
    @Test func everyRedisSecretForbidsCoreDumps() throws {
        let (folder, path) = try secretFile("pa55word\n", mode: 0o600, name: "redis-password")
        defer { folder.remove() }
        let pki = try TestCertificate.Authority(folder: folder.url)
        let client = try pki.issue(commonName: "unicache", dnsNames: [], client: true)
        func holds(_ arguments: [String]) throws -> Bool {
            ProcessHardening.holdsSecrets(try UnicacheConfiguration.parse(arguments: arguments, environment: [:]))
        }
        #expect(try !holds(["--redis", "redis://10.0.0.5"]))
        #expect(try !holds(["--redis", "rediss://10.0.0.5", "--redis-tls-ca", pki.caFile]))
        #expect(try holds(["--redis", "redis://:pw@10.0.0.5"]))
        #expect(try holds(["--redis", "redis://10.0.0.5", "--redis-password-file", path]))
        #expect(try holds(["--redis", "redis-sentinel://s1?master=m&sentinel-password=spw"]))
        #expect(try holds([
            "--redis", "rediss://10.0.0.5", "--redis-tls-cert", client.certificate, "--redis-tls-key", client.key,
        ]))
    }

    @Test func aServerNameMustBeAName() {
        for name in ["10.0.0.5", "::1", "redis internal", "\u{1b}[31mredis"] {
            let message = configurationError(["--redis", "rediss://10.0.0.5", "--redis-tls-server-name", name])
            #expect(message.hasPrefix("--redis-tls-server-name: ") && message.contains("is not a host name"), "\(message)")
            #expect(!message.contains("\u{1b}"))
        }
        #expect(configurationError(["--redis", "rediss://10.0.0.5", "--redis-tls-server-name", "redis.internal"]) == "")
    }

    @Test func sentinelsOverPlainTCPOffLoopbackAreWarnedOfAtStartUp() throws {
        func warning(_ url: String) throws -> String? {
            UnicacheService.sentinelTrustWarning(try RedisEndpoint(url: url))
        }
        let exposed = try #require(try warning("redis-sentinel://:pw@127.0.0.1:26379,10.0.0.7,[fd00::7]:26380?master=m"))
        #expect(exposed.hasPrefix("Sentinels are trusted unauthenticated: over plain TCP, whoever answers at 10.0.0.7:26379, [fd00::7]:26380 can redirect"))
        #expect(exposed.contains("collect the data nodes' password") && exposed.contains("?tls=true"))
        #expect(try warning("redis-sentinel://sentinel.internal?master=m") != nil)
        #expect(try warning("redis-sentinel://127.0.0.1,127.0.0.2:26380,localhost,[::1]?master=m") == nil)
        #expect(try warning("redis-sentinel://10.0.0.7?master=m&tls=true") == nil)
        #expect(try warning("redis://10.0.0.7") == nil)

        // The start-up log says it, once.
        let store = CapturingLogHandler.Store()
        var configuration = UnicacheConfiguration()
        configuration.shared.redis = try RedisEndpoint(url: "redis-sentinel://10.0.0.7?master=m")
        let shared = UnicacheService.sharedTier(
            configuration, codec: EntryCodec(), clock: SystemWallClock(), ticker: ContinuousClock(),
            logger: CapturingLogHandler.logger(store))
        #expect(shared != nil)
        #expect(store.messages.filter { $0.hasPrefix("Sentinels are trusted unauthenticated") }.count == 1)
    }
}
