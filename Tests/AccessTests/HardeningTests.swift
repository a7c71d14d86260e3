@testable import Access
import AccessTestSupport
import HTTPRouting
import Testing

/// CONTRACT §8.9, what an outside audit found: byte equality, one meaning per token, one Authorization header.
@Suite("Hardening found by the audit (CONTRACT §8.9)", .timeLimit(.minutes(2)))
struct HardeningTests {
    let key = SigningKey.all[3]

    /// `"\u{212A}ate"` (KELVIN SIGN) is canonically equivalent to `"Kate"`: Swift's `==` took it for her.
    @Test func aLookAlikeLetterIsAnotherUser() async throws {
        let access = try await makeAccess()
        let kelvin = TokenMinter.mint(key, claims: claims(user: "\u{212A}ate"))
        let denied = try #require(await decide(access, "/v1/users/Kate/profile", token: kelvin))
        #expect(denied.status == 403)
        // Precomposed é against e + COMBINING ACUTE ACCENT: equal to Swift, two users here.
        let composed = TokenMinter.mint(key, claims: claims(user: "Ren\u{E9}"))
        #expect(try #require(await decide(access, "/v1/users/Rene\u{301}/profile", token: composed)).status == 403)
        #expect(await decide(access, "/v1/users/Ren%C3%A9/profile", token: composed) == nil)
        let real = TokenMinter.mint(key, claims: claims(user: "Kate"))
        #expect(await decide(access, "/v1/users/Kate/profile", token: real) == nil)
    }

    @Test func aUserClaimThatIsNotAStringIsNoUser() async throws {
        let access = try await makeAccess()
        for value: Any in [42, ["alice"], ["name": "alice"], true] {
            let token = TokenMinter.mint(key, claims: claims(user: "x", ["sub": value]))
            #expect(try #require(await decide(access, "/v1/users/alice/profile", token: token)).status == 403)
        }
    }

    @Test func issuerAndAudienceCompareBytes() async throws {
        let access = try await makeAccess(issuer: "https://id.example/Kelvin", audience: "Kunicache")
        let good = TokenMinter.mint(
            key, claims: claims(["iss": "https://id.example/Kelvin", "aud": ["other", "Kunicache"]]))
        #expect(await decide(access, token: good) == nil)
        let lookAlikeIssuer = TokenMinter.mint(
            key, claims: claims(["iss": "https://id.example/\u{212A}elvin", "aud": "Kunicache"]))
        #expect(try #require(await decide(access, token: lookAlikeIssuer)).challenge.contains("wrong issuer"))
        let lookAlikeAudience = TokenMinter.mint(
            key, claims: claims(["iss": "https://id.example/Kelvin", "aud": "\u{212A}unicache"]))
        #expect(try #require(await decide(access, token: lookAlikeAudience)).challenge.contains("wrong audience"))
        let foreign = TokenMinter.mint(key, claims: claims(["iss": "https://id.example/Kelvin", "aud": "some-other-client"]))
        #expect(try #require(await decide(access, token: foreign)).status == 401)
        let none = TokenMinter.mint(key, claims: claims(["iss": "https://id.example/Kelvin"]))
        #expect(try #require(await decide(access, token: none)).challenge.contains("wrong audience"))
    }

    /// Foundation keeps the first of two members, most JOSE libraries the last: such a token has no one meaning.
    @Test(arguments: [
        #"{"sub":"alice","sub":"bob","exp":1800000600}"#,
        #"{"sub":"bob","\u0073ub":"alice","exp":1800000600}"#,
        #"{"sub":"alice","exp":1800000600,"exp":1}"#,
        #"{"sub":"alice","exp":1800000600,"scope":"x","scope":"unicache:read"}"#,
        #"{"sub":"alice","exp":1800000600,"nested":{"a":1,"a":2}}"#,
        #"{"sub":"alice","exp":1800000600,"list":[{"a":1},{"b":1,"b":2}]}"#,
        #"{"sub":"alice","exp":1800000600,"Ren\u00e9":1,"Rene\u0301":2}"#,
    ])
    func repeatedClaimsAreRefused(claimsJSON: String) async throws {
        let access = try await makeAccess()
        let header = #"{"alg":"\#(key.alg)","kid":"\#(key.kid ?? "")"}"#
        let token = TokenMinter.mint(key, headerJSON: header, claimsJSON: claimsJSON)
        let denied = try #require(await decide(access, token: token))
        #expect(denied.status == 401)
        #expect(denied.challenge.contains("error=\"invalid_token\""))
        #expect(denied.challenge.contains("repeated"))
    }

    @Test func aRepeatedHeaderMemberIsRefused() async throws {
        let access = try await makeAccess()
        let claimsJSON = #"{"sub":"alice","exp":1800000600}"#
        let clean = TokenMinter.mint(key, headerJSON: #"{"alg":"\#(key.alg)","kid":"\#(key.kid ?? "")"}"#, claimsJSON: claimsJSON)
        #expect(await decide(access, token: clean) == nil)
        for header in [
            #"{"alg":"\#(key.alg)","kid":"\#(key.kid ?? "")","kid":"other"}"#,
            #"{"alg":"\#(key.alg)","\u006bid":"\#(key.kid ?? "")","kid":"\#(key.kid ?? "")"}"#,
            #"{"alg":"\#(key.alg)","alg":"none","kid":"\#(key.kid ?? "")"}"#,
        ] {
            let token = TokenMinter.mint(key, headerJSON: header, claimsJSON: claimsJSON)
            #expect(try #require(await decide(access, token: token)).challenge.contains("repeated"), "\(header)")
        }
    }

    /// Which of two credentials counts would be a guess: 400, in every mode, before anything else is decided.
    @Test(arguments: [AccessSettings.Mode.jwt, .none, .protected])
    func twoAuthorizationHeadersAre400(mode: AccessSettings.Mode) async throws {
        let access = try await makeAccess(mode, adminToken: "s3cret")
        let alice = TokenMinter.mint(key, claims: claims(user: "alice"))
        for target in ["/v1/users/alice/profile", "/v1/cache?prefix=x"] {
            var headers = HTTPHeaders()
            headers.add(name: "Authorization", value: "Bearer \(alice)")
            headers.add(name: "authorization", value: "Bearer s3cret")
            guard case .answer(let response) = access.decide(method: .get, target: target, headers: headers, clientAddress: loopback)
            else {
                Issue.record("two Authorization headers were let through (\(mode), \(target))")
                continue
            }
            #expect(response.status == 400)
            #expect(response.headers["Content-Type"] == "application/problem+json")
            #expect(response.text.contains("repeated-authorization"))
            #expect(!response.text.contains(alice))
        }
        #expect(access.snapshot.allowed == 0)
    }

    @Test func oneOrMoreSpacesAfterBearerForEveryToken() async throws {
        let access = try await makeAccess(adminToken: "s3cret")
        let admin = TokenMinter.mint(key, claims: claims(user: "ops", ["scope": "unicache:admin"]))
        for value in ["Bearer  s3cret", "bearer s3cret", "Bearer   \(admin)"] {
            var headers = HTTPHeaders()
            headers.add(name: "Authorization", value: value)
            guard case .pass = access.decide(method: .delete, target: "/v1/users/alice", headers: headers, clientAddress: loopback)
            else {
                Issue.record("refused: \(value.prefix(12))")
                continue
            }
        }
        var headers = HTTPHeaders()
        headers.add(name: "Authorization", value: "Bearer   \(admin)")
        #expect(access.grantsAdmin(headers))
    }
}

@Suite("The repeated-member scan")
struct DuplicateMembersTests {
    @Test(arguments: [
        #"{}"#, #"{"a":1,"b":[1,2,{"a":3}],"c":{"a":{"a":null}}}"#, #" { "a" : "x\"y" , "b" : -1.5e3 } "#,
        #"{"a":"\u0041","A":1}"#, #"[{"a":1},{"a":2}]"#, #"{"k":"\ud83d\ude00","l":"\ud83d"}"#,
    ])
    func distinctNamesPass(json: String) {
        #expect(!DuplicateMembers.found(in: Array(json.utf8)))
    }

    @Test(arguments: [
        #"{"a":1,"a":1}"#, #"{"a":1,"\u0061":2}"#, #"{"x":[{"a":1,"a":2}]}"#, #"{"\ud83d\ude00":1,"😀":2}"#,
        #"{"a":1,"a\"":{"b":1,"b":2}}"#,
    ])
    func aRepeatedNameIsFound(json: String) {
        #expect(DuplicateMembers.found(in: Array(json.utf8)))
    }
}
