import Access
import Testing
import UnicacheApp

/// `--auth` and the `--jwt-*` flags (CONTRACT §8), each with its environment variable.
@Suite("Access flags", .timeLimit(.minutes(1)))
struct AccessOptionTests {
    func parse(_ arguments: [String], _ environment: [String: String] = [:]) throws -> AccessSettings {
        try UnicacheConfiguration.parse(arguments: arguments, environment: environment).access
    }

    func error(_ arguments: [String], _ environment: [String: String] = [:]) -> String {
        do {
            _ = try UnicacheConfiguration.parse(arguments: arguments, environment: environment)
            return ""
        } catch {
            return error.message
        }
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
        #expect(error(["--auth", "protected"]).hasPrefix("--auth: \"protected\" is not an auth mode"))
        #expect(error(["--auth", "basic"]).contains("use none or jwt"))
        #expect(error([], ["UNICACHE_AUTH": "oauth"]).hasPrefix("UNICACHE_AUTH: "))
        #expect(error(["--auth", "jwt"]).hasPrefix("--jwt-jwks: "))
        #expect(error(["--jwt-jwks", "/k.json"]).hasPrefix("--jwt-jwks: "))
        #expect(error(["--auth", "jwt", "--jwt-jwks", "/k.json", "--jwt-leeway", "1minute"]).hasPrefix("--jwt-leeway: "))
        #expect(error(["--auth", "jwt", "--jwt-jwks", "/k.json", "--jwt-jwks-refresh", "0s"]).hasPrefix("--jwt-jwks-refresh: "))
    }
}
