import Access
import Settings
import Testing
@testable import UnicacheApp

/// `--auth` and the `--jwt-*` flags (CONTRACT §8), each with its environment variable.
@Suite("Access flags", .timeLimit(.minutes(1)))
struct AccessOptionTests {
    func parse(_ arguments: [String], _ environment: [String: String] = [:]) throws -> AccessSettings {
        try UnicacheConfiguration.parse(arguments: arguments, environment: environment).access
    }

    @Test func protectedModeByDefault() throws {
        #expect(try parse([]) == AccessSettings())
        #expect(try parse([]).mode == .protected)
        #expect(UnicacheConfiguration().logMetadata["auth"] == "protected")
    }

    @Test func everyFlagAndItsVariable() throws {
        let flags = try parse([
            "--auth", "jwt", "--jwt-jwks", "https://id.example/jwks.json", "--jwt-jwks-refresh", "5m",
            "--jwt-issuer", "https://id.example", "--jwt-audience", "unicache", "--jwt-user-claim", "uid",
            "--jwt-leeway", "30s",
        ])
        let expected = AccessSettings(
            mode: .jwt, jwks: "https://id.example/jwks.json", jwksRefresh: .seconds(300), issuer: "https://id.example",
            audience: "unicache", userClaim: "uid", leeway: .seconds(30))
        #expect(flags == expected)
        #expect(flags.jwksIsURL)
        let environment = try parse([], [
            "UNICACHE_AUTH": "jwt", "UNICACHE_JWT_JWKS": "https://id.example/jwks.json", "UNICACHE_JWT_JWKS_REFRESH": "5m",
            "UNICACHE_JWT_ISSUER": "https://id.example", "UNICACHE_JWT_AUDIENCE": "unicache",
            "UNICACHE_JWT_USER_CLAIM": "uid", "UNICACHE_JWT_LEEWAY": "30s",
        ])
        #expect(environment == expected)
        #expect(try parse(["--auth", "none"], ["UNICACHE_AUTH": "jwt"]).mode == .none)  // the flag wins
    }

    @Test func invalidValuesNameTheFlag() {
        #expect(configurationError(["--auth", "protected"]).hasPrefix("--auth: \"protected\" is not an auth mode"))
        #expect(configurationError(["--auth", "basic"]).contains("use none or jwt"))
        #expect(configurationError([], ["UNICACHE_AUTH": "oauth"]).hasPrefix("UNICACHE_AUTH: "))
        #expect(configurationError(["--auth", "jwt"]).hasPrefix("--jwt-jwks: "))
        #expect(configurationError(["--auth", "jwt", "--jwt-jwks", "/k.json"]).hasPrefix("--jwt-audience: "))
        #expect(configurationError(["--jwt-jwks", "/k.json"]).hasPrefix("--jwt-jwks: "))
        #expect(configurationError(["--auth", "jwt", "--jwt-jwks", "/k.json", "--jwt-leeway", "1minute"]).hasPrefix("--jwt-leeway: "))
        #expect(configurationError(["--auth", "jwt", "--jwt-jwks", "/k.json", "--jwt-jwks-refresh", "0s"]).hasPrefix("--jwt-jwks-refresh: "))
    }

    /// CONTRACT §8.9: without an audience a token minted for any other API of the issuer would be accepted, so
    /// `--auth jwt` needs one, or `any` said out loud (with a start-up warning).
    @Test func jwtNeedsAnAudienceOrAnExplicitAny() throws {
        let message = configurationError(["--auth", "jwt", "--jwt-jwks", "/k.json"])
        #expect(message.hasPrefix("--jwt-audience: --auth jwt needs the audience"))
        #expect(message.contains("--jwt-audience any"))
        #expect(configurationError([], ["UNICACHE_AUTH": "jwt", "UNICACHE_JWT_JWKS": "/k.json"]).hasPrefix("--jwt-audience: "))
        let any = try parse(["--auth", "jwt", "--jwt-jwks", "/k.json", "--jwt-audience", "any"])
        #expect(any.audience == nil)
        #expect(AccessStartup.warnings(any).contains { $0.hasPrefix("--jwt-audience any: ") })
        let named = try parse(["--auth", "jwt", "--jwt-jwks", "/k.json"], ["UNICACHE_JWT_AUDIENCE": "unicache"])
        #expect(named.audience == "unicache")
        #expect(AccessStartup.warnings(named).isEmpty)
        #expect(try parse(["--auth", "none"]).audience == nil)
    }

    /// CONTRACT §11.4: protected mode bound to a network address says at start-up whom it serves.
    @Test(arguments: [("0.0.0.0", true), ("::", true), ("192.0.2.7", true), ("127.0.0.1", false), ("::1", false),
                      ("localhost", false)])
    func protectedModeOnANetworkAddressIsWarnedOf(host: String, warned: Bool) throws {
        let warnings = AccessStartup.warnings(try parse([]), host: host)
        #expect(warnings.contains { $0.hasPrefix("protected mode on \(host): only loopback clients") } == warned)
        #expect(AccessStartup.warnings(try parse(["--auth", "none"]), host: host).isEmpty)
    }

    /// An `http://` JWKS URL on another host can be swapped by whoever is on the path: a start-up warning names it.
    @Test(arguments: [
        ("http://id.example/jwks.json", true), ("http://user:pw@10.0.0.7:8080/jwks", true), ("https://id.example/jwks", false),
        ("http://127.0.0.1:9000/jwks", false), ("http://localhost/jwks", false), ("http://[::1]:80/jwks", false),
        ("/etc/unicache/jwks.json", false),
    ])
    func plainHTTPKeysFromAnotherHostAreWarnedOf(jwks: String, warned: Bool) throws {
        let settings = try parse(["--auth", "jwt", "--jwt-jwks", jwks, "--jwt-audience", "unicache"])
        let warnings = AccessStartup.warnings(settings)
        #expect(warnings.contains { $0.hasPrefix("--jwt-jwks: the JWKS is fetched over plain http://") } == warned)
        #expect(!warnings.joined().contains("pw@"))
    }
}
