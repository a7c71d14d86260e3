import Access
import AccessTestSupport
import Foundation
import HTTPRouting
import Testing

@Suite("Bearer JWT verification (CONTRACT §8.2, §8.4)", .timeLimit(.minutes(2)))
struct TokenVerificationTests {
    @Test(arguments: SigningKey.all)
    func eachAcceptedAlgorithmVerifies(key: SigningKey) async throws {
        let access = try await makeAccess()
        #expect(await decide(access, token: TokenMinter.mint(key, claims: claims())) == nil, "\(key.alg)")
        // The same key named with its `alg` in the JWK also verifies.
        let named = try await makeAccess(source: MemoryJWKSSource(jwks([key.jwk(namingAlg: true)])))
        #expect(await decide(named, token: TokenMinter.mint(key, claims: claims())) == nil, "\(key.alg)")
    }

    @Test func anotherKeysSignatureIsRefused() async throws {
        let access = try await makeAccess()
        let impostor = SigningKey.es256()  // same kid as the key set's ES256 key, another private key
        let denied = try #require(await decide(access, token: TokenMinter.mint(impostor, claims: claims())))
        #expect(denied.status == 401)
        #expect(denied.challenge.contains("error=\"invalid_token\""))
        #expect(denied.challenge.contains("error_description=\"bad signature\""))
    }

    @Test func tamperedPayloadIsRefused() async throws {
        let access = try await makeAccess()
        let token = TokenMinter.mint(SigningKey.all[0], claims: claims(user: "alice"))
        let parts = token.split(separator: ".")
        let forged = parts[0] + "." + b64(try JSONSerialization.data(withJSONObject: claims(user: "bob"))) + "." + parts[2]
        let denied = try #require(await decide(access, "/v1/users/bob/subscription", token: String(forged)))
        #expect(denied.status == 401)
        #expect(access.snapshot.denied[.invalid] == 1)
    }

    @Test func unsignedAndHMACTokensAreRefused() async throws {
        let access = try await makeAccess()
        for key in SigningKey.all {
            let none = TokenMinter.unsigned(claims: claims(), kid: key.kid)
            let hmac = TokenMinter.hs256(claims: claims(), kid: key.kid, secret: key.publicKeyBytes)
            let jwkBytes = Array(String(decoding: jwks([key.jwk()]), as: UTF8.self).utf8)
            let hmacJWKS = TokenMinter.hs256(claims: claims(), kid: key.kid, secret: jwkBytes)
            for token in [none, hmac, hmacJWKS] {
                let denied = try #require(await decide(access, token: token), "\(key.alg)")
                #expect(denied.status == 401)
                #expect(denied.challenge.contains("invalid_token"))
            }
        }
        // A key named RS256 in its JWK does not verify a PS256 token signed by the same RSA key.
        let rsa = SigningKey.all[0]
        let boundAccess = try await makeAccess(source: MemoryJWKSSource(jwks([rsa.jwk(namingAlg: true)])))
        let pss = SigningKey(kind: { if case .rsa(let k, _) = rsa.kind { return .rsa(k, pss: true) }; return rsa.kind }(), kid: rsa.kid)
        #expect(try #require(await decide(boundAccess, token: TokenMinter.mint(pss, claims: claims()))).status == 401)
        // An EC key does not verify under an RSA algorithm name.
        let es = SigningKey.all[2]
        let mislabelled = TokenMinter.mint(es, claims: claims(), header: ["alg": "RS256", "kid": es.kid!])
        #expect(try #require(await decide(access, token: mislabelled)).status == 401)
    }

    @Test func keyURLsInTheHeaderAreNeverFollowed() async throws {
        // A key set without the attacker's key; the header points at the attacker's key in every way JOSE allows.
        let trusted = SigningKey.es256(kid: "trusted")
        let attacker = SigningKey.es256(kid: "attacker")
        let access = try await makeAccess(keys: [trusted])
        let header: [String: Any] = [
            "alg": "ES256", "jku": "http://127.0.0.1:9/jwks.json", "x5u": "http://127.0.0.1:9/cert.pem",
            "jwk": attacker.jwk(), "x5c": ["MIIB"],
        ]
        let denied = try #require(await decide(access, token: TokenMinter.mint(attacker, claims: claims(), header: header)))
        #expect(denied.status == 401)
        #expect(denied.challenge.contains("bad signature"))
    }

    @Test func kidIsRequiredWithSeveralKeys() async throws {
        let several = try await makeAccess()
        let key = SigningKey.all[3].with(kid: nil)
        #expect(try #require(await decide(several, token: TokenMinter.mint(key, claims: claims()))).status == 401)
        let one = try await makeAccess(keys: [SigningKey.all[3]])
        #expect(await decide(one, token: TokenMinter.mint(key, claims: claims())) == nil)
        let unknown = TokenMinter.mint(SigningKey.all[3].with(kid: "nope"), claims: claims())
        let denied = try #require(await decide(one, token: unknown))
        #expect(denied.challenge.contains("unknown key"))
    }

    @Test func timesAreCheckedWithTheLeeway() async throws {
        let clock = TestClock()
        let access = try await makeAccess(clock: clock)
        let key = SigningKey.all[4]
        let now = TestClock.start
        let expired = TokenMinter.mint(key, claims: claims(now: now - 1000, lifetime: 900))  // exp 100 s ago
        let denied = try #require(await decide(access, token: expired))
        #expect(denied.challenge.contains("token expired"))
        #expect(access.snapshot.denied[.expired] == 1)
        let justExpired = TokenMinter.mint(key, claims: claims(now: now - 930, lifetime: 900))  // 30 s ago: leeway
        #expect(await decide(access, token: justExpired) == nil)
        let future = TokenMinter.mint(key, claims: claims(["nbf": now + 120]))
        #expect(try #require(await decide(access, token: future)).challenge.contains("nbf"))
        let soon = TokenMinter.mint(key, claims: claims(["nbf": now + 30]))
        #expect(await decide(access, token: soon) == nil)
        let issuedLater = TokenMinter.mint(key, claims: claims(["iat": now + 120]))
        #expect(try #require(await decide(access, token: issuedLater)).status == 401)
        var noExp = claims()
        noExp["exp"] = nil
        #expect(try #require(await decide(access, token: TokenMinter.mint(key, claims: noExp))).challenge.contains("no exp"))
        let textExp = TokenMinter.mint(key, claims: claims(["exp": "\(Int(now) + 600)"]))
        #expect(try #require(await decide(access, token: textExp)).challenge.contains("malformed exp"))
    }

    @Test func issuerAndAudienceWhenConfigured() async throws {
        let access = try await makeAccess(issuer: "https://id.example", audience: "unicache")
        let key = SigningKey.all[2]
        let good = claims(["iss": "https://id.example", "aud": ["other", "unicache"]])
        #expect(await decide(access, token: TokenMinter.mint(key, claims: good)) == nil)
        #expect(await decide(access, token: TokenMinter.mint(key, claims: good.merging(["aud": "unicache"]) { $1 })) == nil)
        for bad in [["iss": "https://evil.example"], ["aud": "other"], ["aud": ["x"]]] as [[String: Any]] {
            let denied = try #require(await decide(access, token: TokenMinter.mint(key, claims: good.merging(bad) { $1 })))
            #expect(denied.status == 401)
        }
        var noIssuer = good
        noIssuer["iss"] = nil
        #expect(try #require(await decide(access, token: TokenMinter.mint(key, claims: noIssuer))).status == 401)
    }

    /// RFC 4648 section 3.5: a signature's last character may carry bits past its bytes, which a lenient decoder
    /// drops; the token is then one of up to 16 spellings. Only the one whose spare bits are zero is accepted.
    @Test(arguments: SigningKey.all)
    func aSignatureWithSpareBitsSetIsMalformed(key: SigningKey) async throws {
        let access = try await makeAccess()
        let token = TokenMinter.mint(key, claims: claims())
        #expect(await decide(access, token: token) == nil, "\(key.alg)")
        let alphabet = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_")
        let signature = try #require(token.split(separator: ".").last)
        let spare = [0: 0, 2: 0x0F, 3: 0x03][signature.count % 4] ?? 0
        guard spare != 0 else { return }  // ES384: 96 bytes fill whole characters
        let last = try #require(alphabet.firstIndex(of: token.last!))
        let respelled = String(token.dropLast()) + String(alphabet[last | 1])
        let denied = try #require(await decide(access, token: respelled), "\(key.alg)")
        #expect(denied.status == 401)
        #expect(denied.challenge.contains("malformed signature"))
    }

    @Test func malformedTokensAreInvalidAndNeverEchoed() async throws {
        let access = try await makeAccess()
        let secretish = "abc.def.ghi-SECRET"
        for token in ["x", "a.b", "a.b.c.d", secretish, String(repeating: "a", count: 9000)] {
            let denied = try #require(await decide(access, token: token))
            #expect(denied.status == 401)
            #expect(!denied.text.contains("SECRET"))
            #expect(!denied.challenge.contains("SECRET"))
        }
    }
}
