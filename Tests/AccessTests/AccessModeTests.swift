import Access
import AccessTestSupport
import HTTPRouting
import Testing

@Suite("Protected and open modes", .timeLimit(.minutes(1)))
struct AccessModeTests {
    @Test func loopbackAddressesAreTold() {
        #expect(address([127, 0, 0, 1]).isLoopback)
        #expect(address([127, 200, 3, 4]).isLoopback)
        #expect(!address([128, 0, 0, 1]).isLoopback)
        #expect(!address([198, 18, 0, 2]).isLoopback)
        #expect(address([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]).isLoopback)
        #expect(!address([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]).isLoopback)
        #expect(address([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 127, 0, 0, 1]).isLoopback)
        #expect(!address([0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0xFF, 0xFF, 10, 0, 0, 1]).isLoopback)
        #expect(!ClientAddress.unknown.isLoopback)
    }

    @Test func protectedModeServesLoopbackOnly() async throws {
        let access = try await makeAccess(.protected)
        #expect(await decide(access, peer: loopback) == nil)
        #expect(await decide(access, .delete, "/v1/cache/k", peer: loopback) == nil)
        let denied = try #require(await decide(access))
        #expect(denied.status == 403)
        #expect(denied.headers["Content-Type"] == "application/problem+json")
        #expect(denied.text.contains("--auth jwt"))
        #expect(denied.text.contains("--auth none"))
        // The whole fix: --auth jwt starts only with its keys and its audience (CONTRACT §11.6).
        #expect(denied.text.contains("--auth jwt --jwt-jwks FILE|URL --jwt-audience AUDIENCE"))
        #expect(denied.text.contains("UNICACHE_JWT_AUDIENCE"))
        #expect(try #require(await decide(access, .post, "/v1/users/alice/events")).status == 403)
        #expect(try #require(await decide(access, .get, "/v1/cache?prefix=a")).status == 403)
        #expect(access.snapshot.denied[.protected] == 3)
        #expect(access.snapshot.allowed == 2)
    }

    @Test func operationsEndpointsAnswerEveryone() async throws {
        for mode in AccessSettings.Mode.allCases {
            let access = try await makeAccess(mode)
            for path in ["/healthz", "/readyz", "/stats", "/metrics", "/openapi.yaml"] {
                #expect(await decide(access, .get, path) == nil, "\(mode) \(path)")
            }
            #expect(access.snapshot.allowed == 0)
        }
    }

    @Test func noneOpensEverything() async throws {
        let access = try await makeAccess(.none)
        #expect(await decide(access) == nil)
        #expect(await decide(access, .delete, "/v1/users/alice") == nil)
        #expect(access.snapshot.mode == .none)
        #expect(access.snapshot.allowed == 2)
    }

    @Test func jwtWithoutATokenIsAskedForOne() async throws {
        let access = try await makeAccess(.jwt)
        for peer in [loopback, remotePeer] {
            let denied = try #require(await decide(access, peer: peer))
            #expect(denied.status == 401)
            #expect(denied.challenge == "Bearer realm=\"unicache\"")
            #expect(denied.headers["Content-Type"] == "application/problem+json")
        }
        #expect(access.snapshot.denied[.missing] == 2)
    }

    @Test func jwtModeNeedsAUsableKeySet() async throws {
        let empty = MemoryJWKSSource(jwks([["kty": "oct", "k": "c2VjcmV0", "kid": "h"]]))
        await #expect(throws: AccessControl.StartError.self) { try await makeAccess(.jwt, source: empty) }
        let garbage = MemoryJWKSSource(Array("not json".utf8))
        do {
            _ = try await makeAccess(.jwt, source: garbage)
            Issue.record("a JWKS that is not JSON was accepted")
        } catch {
            #expect(String(describing: error).hasPrefix("--jwt-jwks"))
        }
    }
}

/// The gate sees a target the way the router will route it: a target that percent-encodes its path or names an
/// authority (absolute form) is read as the router reads it, so that no spelling of a user's path slips past.
@Suite("Targets as the router reads them", .timeLimit(.minutes(1)))
struct TargetSpellingTests {
    @Test(arguments: [
        "/%761/users/alice/subscription",  // "v1" percent-encoded
        "/v%31/users/alice/subscription",
        "http://unicache/v1/users/alice/subscription",  // absolute form
        "http://unicache/%761/users/alice/subscription",
        "/v1/%75sers/alice/subscription",
    ])
    func everySpellingOfAUsersPathIsGuarded(target: String) async throws {
        let protected = try await makeAccess(.protected)
        #expect(try #require(await decide(protected, .get, target)).status == 403)
        let jwt = try await makeAccess(.jwt)
        #expect(try #require(await decide(jwt, .get, target)).status == 401)
    }

    /// …and the user the gate checks is the user the route will serve.
    @Test func theUserOfAnAbsoluteOrEncodedTargetIsTheRoutedUser() async throws {
        let access = try await makeAccess(.jwt)
        let alice = TokenMinter.mint(SigningKey.all[4], claims: claims(user: "alice"))
        #expect(await decide(access, "http://unicache/v1/users/alice/subscription", token: alice) == nil)
        #expect(await decide(access, "/%761/users/alice/subscription", token: alice) == nil)
        #expect(try #require(await decide(access, "http://unicache/v1/users/bob/subscription", token: alice)).status == 403)
        #expect(try #require(await decide(access, "/%761/users/bob/subscription", token: alice)).status == 403)
    }
}
