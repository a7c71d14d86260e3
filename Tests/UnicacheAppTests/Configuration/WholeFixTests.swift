import Access
import Foundation
import HTTPRouting
import Settings
import Testing

@testable import UnicacheApp

/// CONTRACT §11.6: a message that names a fix names all of it, so that following it is enough.
@Suite struct WholeFixTests {
    /// `--auth jwt` needs its keys and its audience: a message sending there names both.
    @Test func messagesThatSendToJWTNameItsKeysAndItsAudience() throws {
        #expect(configurationError(["--auth", "jwt"]).contains("--jwt-audience"))
        #expect(configurationError(["--auth", "jwt"]).hasPrefix("--jwt-jwks: "))
        #expect(configurationError(["--jwt-jwks", "/k.json"]).contains("add --auth jwt and --jwt-audience AUDIENCE"))
        #expect(configurationError(["--jwt-jwks", "/k.json", "--jwt-audience", "api"]).contains("add --auth jwt, or"))
        let warnings = AccessStartup.warnings(AccessSettings(mode: .protected), host: "0.0.0.0")
        #expect(warnings.count == 1)
        #expect(warnings.allSatisfy { $0.contains("--auth jwt --jwt-jwks FILE|URL --jwt-audience AUDIENCE") })
    }

    /// Admin disabled: either way of giving the token, and with `--auth jwt` the admin scope.
    @Test func adminDisabledNamesTheTokenAndItsFile() async throws {
        let h = AppHarness(adminToken: nil)
        let answer = try await h.send(.post, "/v1/users/alice/events", body: #"{"type":"health.synced"}"#, admin: true)
        #expect(answer.status == 403)
        #expect(answer.json["type"] as? String == Problem.typeURI("admin-disabled"))
        let detail = try #require(answer.json["detail"] as? String)
        #expect(detail.contains("--admin-token TOKEN or --admin-token-file FILE"))
        #expect(detail.contains("UNICACHE_ADMIN_TOKEN_FILE"))
        #expect(AdminAuth.disabledDetail(jwt: true).contains("scope unicache:admin"))
    }
}
