import Access
import AccessTestSupport
import HTTPRouting
import Testing

@Suite("Whose data a token reads (CONTRACT §8.3)", .timeLimit(.minutes(2)))
struct AuthorizationTests {
    let key = SigningKey.all[4]

    @Test func theUsersOwnDataOnly() async throws {
        let access = try await makeAccess()
        let alice = TokenMinter.mint(key, claims: claims(user: "alice"))
        #expect(await decide(access, .get, "/v1/users/alice/health/today?tz=UTC", token: alice) == nil)
        #expect(await decide(access, .head, "/v1/users/alice/profile", token: alice) == nil)
        #expect(await decide(access, .get, "/v1/users/%61lice/profile", token: alice) == nil)
        let denied = try #require(await decide(access, .get, "/v1/users/bob/profile", token: alice))
        #expect(denied.status == 403)
        #expect(denied.challenge.contains("error=\"insufficient_scope\""))
        #expect(denied.headers["Content-Type"] == "application/problem+json")
        #expect(try #require(await decide(access, .get, "/v1/users/Alice/profile", token: alice)).status == 403)
        #expect(access.snapshot.denied[.forbidden] == 2)
    }

    @Test func readScopeReadsEveryUser() async throws {
        let access = try await makeAccess()
        let service = TokenMinter.mint(key, claims: claims(user: "svc", ["scope": "openid unicache:read"]))
        let scp = TokenMinter.mint(key, claims: claims(user: "svc", ["scp": ["unicache:read"]]))
        for token in [service, scp] {
            #expect(await decide(access, .get, "/v1/users/bob/profile", token: token) == nil)
            #expect(try #require(await decide(access, .delete, "/v1/users/bob", token: token)).status == 403)
        }
    }

    @Test func aConfiguredUserClaim() async throws {
        let access = try await makeAccess(userClaim: "uid")
        let token = TokenMinter.mint(key, claims: claims(user: "someone", ["uid": "carol"]))
        #expect(await decide(access, .get, "/v1/users/carol/profile", token: token) == nil)
        #expect(try #require(await decide(access, .get, "/v1/users/someone/profile", token: token)).status == 403)
    }

    @Test func adminNeedsTheAdminScopeOrTheAdminToken() async throws {
        let access = try await makeAccess(adminToken: "s3cret")
        let admin = TokenMinter.mint(key, claims: claims(user: "ops", ["scope": "unicache:admin"]))
        let alice = TokenMinter.mint(key, claims: claims(user: "alice"))
        let adminRequests: [(HTTPMethod, String)] = [
            (.post, "/v1/users/alice/events"), (.delete, "/v1/users/alice"), (.put, "/v1/cache/k"),
            (.get, "/v1/cache?prefix=x"), (.post, "/v1/users/alice/health/averages/warm"),
        ]
        for (method, path) in adminRequests {
            #expect(await decide(access, method, path, token: admin) == nil)
            #expect(await decide(access, method, path, token: "s3cret") == nil)
            #expect(try #require(await decide(access, method, path, token: alice)).status == 403, "\(path)")
            #expect(try #require(await decide(access, method, path, token: "wrong")).status == 401, "\(path)")
            #expect(try #require(await decide(access, method, path)).status == 401, "\(path)")
        }
        var headers = HTTPHeaders()
        headers.add(name: "Authorization", value: "Bearer \(admin)")
        #expect(access.grantsAdmin(headers))
        headers.replaceOrAdd(name: "Authorization", value: "Bearer \(alice)")
        #expect(!access.grantsAdmin(headers))
    }

    @Test func noAdminJWTInOtherModes() async throws {
        let admin = TokenMinter.mint(key, claims: claims(user: "ops", ["scope": "unicache:admin"]))
        var headers = HTTPHeaders()
        headers.add(name: "Authorization", value: "Bearer \(admin)")
        for mode in [AccessSettings.Mode.none, .protected] {
            #expect(!(try await makeAccess(mode).grantsAdmin(headers)))
        }
    }
}
