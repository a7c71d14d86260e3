import AccessTestSupport
import Foundation
@testable import Settings
import TestSupport
import Testing
import UnicacheApp

/// CONTRACT §8.1 and §8.5 as the executable shows them: the start-up log names the mode, and a JWKS that
/// cannot be read or holds no usable key stops the service before it listens, with one line naming the flag.
@Suite("Access at start-up", .serialized, .timeLimit(.minutes(2)), .executableBuilt)
struct AccessExecutableTests {
    @Test func theStartUpLogNamesTheMode() async throws {
        for (arguments, mode) in [([String](), "protected"), (["--auth", "none"], "none")] {
            var service = try await ExecutableTests.Service.start(arguments + ["--log-format", "json"])
            #expect(service.port != nil)
            #expect(service.log.contains("access mode \(mode)"), "\(service.log)")
            #expect(await service.stop() == 0)
        }
    }

    @Test func anUnusableJWKSStopsStartUpNamingTheFlag() async throws {
        let folder = try TemporaryFolder("jwks")
        defer { folder.remove() }
        let hmacOnly = folder.url.appendingPathComponent("hmac.json")
        try Data(jwks([["kty": "oct", "k": "c2VjcmV0", "kid": "h"]])).write(to: hmacOnly)
        let usable = folder.url.appendingPathComponent("usable.json")
        try Data(jwks([SigningKey.es256().jwk()])).write(to: usable)
        for jwks in [folder.file("missing.json"), hmacOnly.path, "http://127.0.0.1:1/jwks.json"] {
            let result = try await BuiltExecutable.run(
                ["--auth", "jwt", "--jwt-jwks", jwks, "--jwt-audience", "unicache", "--port", "0", "--disk-limit", "0"])
            #expect(result.status == 64, "\(jwks)")
            let lines = result.standardError.split(separator: "\n")
            #expect(lines.last?.hasPrefix("error: --jwt-jwks: ") == true, "\(result.standardError)")
            if jwks.hasPrefix("http") {
                // CONTRACT §11.4: the URL and the cause.
                #expect(lines.last?.contains("http://127.0.0.1:1/jwks.json: ") == true, "\(result.standardError)")
                #expect(lines.last?.contains("connection refused") == true, "\(result.standardError)")
            }
            #expect(!result.standardError.contains("listening on"))
        }
        var service = try await ExecutableTests.Service.start(
            ["--auth", "jwt", "--jwt-jwks", usable.path, "--jwt-audience", "unicache", "--log-format", "json"])
        #expect(service.port != nil)
        #expect(service.log.contains("access mode jwt"))
        #expect(!service.log.contains("--jwt-audience any"))
        #expect(await service.stop() == 0)
        // `any` is said out loud, and the log says what it lets in.
        var any = try await ExecutableTests.Service.start(
            ["--auth", "jwt", "--jwt-jwks", usable.path, "--jwt-audience", "any", "--log-format", "json"])
        #expect(any.port != nil)
        #expect(any.log.contains("--jwt-audience any: tokens minted for any other API"), "\(any.log)")
        #expect(await any.stop() == 0)
    }
}
