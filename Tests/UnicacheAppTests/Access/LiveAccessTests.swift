import Access
import AccessTestSupport
import AsyncHTTPClient
import Clocks
import ClocksTesting
import Foundation
import JSONLogging
import Logging
@testable import Settings
import Testing
import TestSupport
import UnifiedCache

@testable import UnicacheApp

/// CONTRACT §8 through the whole service: a JWKS served over HTTP by the test upstream (which counts its
/// fetches), real tokens, and the cache and upstream untouched by denied requests.
@Suite("Access through the live service", .serialized, .timeLimit(.minutes(3)))
struct LiveAccessTests {
    let key = SigningKey.es256(kid: "k1")
    let rotated = SigningKey.ed25519(kid: "k2")

    /// Runs `body` with the service with `--auth jwt --jwt-jwks http://…/jwks.json` (served by its own test
    /// upstream), its access control and the upstream's port; the service is stopped however `body` ends.
    func withStarted<Value>(
        logger: Logger = Logger(label: "live-access"), audience: String? = nil,
        refresh: Duration = AccessSettings.defaultRefresh, clock: any Clock<Duration> = ContinuousClock(),
        _ body: (LiveService, AccessControl, Int) async throws -> Value
    ) async throws -> Value {
        let upstream = TestUpstream()
        let port = try await upstream.start()
        upstream.reply("/jwks.json", .json(String(decoding: jwks([key.jwk()]), as: UTF8.self)))
        let settings = AccessSettings(
            mode: .jwt, jwks: "\(TestUpstream.baseURL(port: port))/jwks.json", jwksRefresh: refresh, audience: audience)
        let live: LiveService
        do {
            live = try await LiveService.start(
                gateClock: clock, logger: logger, upstream: (upstream, port), access: settings, ownsUpstream: true)
        } catch {
            await upstream.shutdown()
            throw error
        }
        return try await withService(live) { live in try await body(live, try #require(live.app.access), port) }
    }

    @Test func deniedRequestsTouchNeitherCacheNorUpstream() async throws {
        try await withStarted { live, _, _ in
            let alice = TokenMinter.mint(key, claims: claims(user: "alice", now: Date().timeIntervalSince1970))
            let before = live.app.cache.statistics().requests
            let missing = try await live.request(.GET, "/v1/users/alice/subscription")
            let other = try await live.request(.GET, "/v1/users/bob/subscription", headers: [("Authorization", "Bearer \(alice)")])
            let bad = try await live.request(.GET, "/v1/users/alice/subscription", headers: [("Authorization", "Bearer x.y.z")])
            #expect(live.app.cache.statistics().requests == before)
            #expect(live.upstream.requestCount("/users/alice/subscription") == 0)
            #expect(live.upstream.requestCount("/users/bob/subscription") == 0)
            let own = try await live.request(.GET, "/v1/users/alice/subscription", headers: [("Authorization", "Bearer \(alice)")])
            // Warm: the shortcut's answer is still behind the gate.
            let warm = try await live.request(.GET, "/v1/users/alice/subscription", headers: [("Authorization", "Bearer \(alice)")])
            let warmDenied = try await live.request(.GET, "/v1/users/alice/subscription")
            let stats = try await live.request(.GET, "/stats")
            let metrics = try await live.request(.GET, "/metrics")
            await live.stop()

            #expect(missing.status == 401 && missing.header("WWW-Authenticate") == "Bearer realm=\"unicache\"")
            #expect(missing.header("Content-Type") == "application/problem+json")
            #expect(other.status == 403 && other.header("WWW-Authenticate")?.contains("insufficient_scope") == true)
            #expect(bad.status == 401 && bad.header("WWW-Authenticate")?.contains("invalid_token") == true)
            #expect(own.status == 200 && own.header("X-Cache") == "MISS")
            #expect(warm.status == 200 && warm.header("X-Cache") == "HIT")
            #expect(warmDenied.status == 401)
            let auth = try #require(try JSONSerialization.jsonObject(with: Data(stats.body.utf8)) as? [String: Any])["auth"]
                as? [String: Any]
            #expect(auth?["mode"] as? String == "jwt")
            #expect(auth?["allowed"] as? Int == 2)
            #expect(auth?["keys"] as? Int == 1)
            let denied = auth?["denied"] as? [String: Int]
            #expect(denied == ["missing": 2, "invalid": 1, "expired": 0, "forbidden": 1, "protected": 0])
            #expect(metrics.body.contains("unicache_auth_requests_total{result=\"allowed\"} 2"))
            #expect(metrics.body.contains("unicache_auth_requests_total{result=\"missing\"} 2"))
            for answer in [missing, other, bad, stats] { #expect(!answer.body.contains(alice)) }
        }
    }

    /// CONTRACT §8.9, as the audit read it over HTTP: a look-alike `sub`, a token for another API, repeated claims
    /// and two Authorization headers are refused before the cache or an upstream sees them.
    @Test func whatTheAuditReadIsRefused() async throws {
        try await withStarted(audience: "unicache") { live, _, _ in
            let now = Date().timeIntervalSince1970
            func get(_ path: String, _ headers: [(String, String)]) async throws -> LiveService.Answer {
                try await live.request(.GET, path, headers: headers)
            }
            let kate = TokenMinter.mint(key, claims: claims(user: "Kate", now: now, ["aud": "unicache"]))
            let kelvin = TokenMinter.mint(key, claims: claims(user: "\u{212A}ate", now: now, ["aud": "unicache"]))
            let foreign = TokenMinter.mint(key, claims: claims(user: "Kate", now: now, ["aud": "some-other-client"]))
            let repeated = TokenMinter.mint(
                key, headerJSON: #"{"alg":"ES256","kid":"k1"}"#,
                claimsJSON: #"{"sub":"Kate","sub":"bob","aud":"unicache","exp":\#(Int(now) + 600)}"#)
            let lookAlike = try await get("/v1/users/Kate/profile", [("Authorization", "Bearer \(kelvin)")])
            let otherAPI = try await get("/v1/users/Kate/profile", [("Authorization", "Bearer \(foreign)")])
            let twoMeanings = try await get("/v1/users/Kate/profile", [("Authorization", "Bearer \(repeated)")])
            let twoHeaders = try await get(
                "/v1/users/Kate/profile", [("Authorization", "Bearer \(kate)"), ("Authorization", "Bearer \(kelvin)")])
            #expect(live.upstream.requestCount("/users/Kate/profile") == 0)
            let own = try await get("/v1/users/Kate/profile", [("Authorization", "Bearer \(kate)")])
            await live.stop()

            #expect(lookAlike.status == 403)
            #expect(otherAPI.status == 401 && otherAPI.header("WWW-Authenticate")?.contains("wrong audience") == true)
            #expect(twoMeanings.status == 401 && twoMeanings.header("WWW-Authenticate")?.contains("invalid_token") == true)
            #expect(twoHeaders.status == 400 && twoHeaders.header("Content-Type") == "application/problem+json")
            #expect(own.status == 200 && own.header("X-Cache") == "MISS")
        }
    }

    /// CONTRACT §8.9: a URL JWKS is fetched every refresh by a timer, with no request arriving, so a removed key stops
    /// being honoured on an idle service. The timer runs on the service's monotonic clock, moved here by hand.
    @Test func aURLJWKSIsRefreshedWithoutTraffic() async throws {
        let clock = ManualClock()
        let refresh = Duration.seconds(600)
        try await withStarted(refresh: refresh, clock: clock) { live, access, _ in
            #expect(live.upstream.requestCount("/jwks.json") == 1)
            live.upstream.reply("/jwks.json", .json(String(decoding: jwks([rotated.jwk()]), as: UTF8.self)))
            let before = access.snapshot.keyRefreshes
            // The timer parks on the clock (nothing else of the service sleeps that far ahead); one period later
            // it fetches the keys once, and parks again.
            await waitUntil("the key set's timer waits") { clock.sleepers(beyond: refresh - .seconds(1)) == 1 }
            #expect(access.snapshot.keyRefreshes == before)
            clock.advance(by: refresh)
            await waitUntil("the key set is refreshed by its timer") { access.snapshot.keyRefreshes == before + 1 }
            await waitUntil("the key set's timer waits again") { clock.sleepers(beyond: refresh - .seconds(1)) == 1 }
            let fetches = live.upstream.requestCount("/jwks.json")
            let token = TokenMinter.mint(key, claims: claims(user: "alice", now: Date().timeIntervalSince1970))
            let old = try await live.request(.GET, "/v1/users/alice/profile", headers: [("Authorization", "Bearer \(token)")])
            await live.stop()
            #expect(fetches == 2)
            #expect(old.status == 401)
        }
    }

    @Test func anUnknownKidFetchesTheKeysAgainOnceAndJkuIsNeverFollowed() async throws {
        try await withStarted { live, access, port in
            let now = Date().timeIntervalSince1970
            #expect(live.upstream.requestCount("/jwks.json") == 1)
            live.upstream.reply("/jwks.json", .json(String(decoding: jwks([key.jwk(), rotated.jwk()]), as: UTF8.self)))
            let header: [String: Any] = ["alg": "EdDSA", "kid": "k2", "jku": "\(TestUpstream.baseURL(port: port))/attacker.json"]
            let token = TokenMinter.mint(rotated, claims: claims(user: "alice", now: now), header: header)
            let first = try await live.request(.GET, "/v1/users/alice/profile", headers: [("Authorization", "Bearer \(token)")])
            #expect(live.upstream.requestCount("/jwks.json") == 2)
            // Unknown kids within 30 s: no fetch, whatever their number.
            let stranger = TokenMinter.mint(SigningKey.ed25519(kid: "k3"), claims: claims(user: "alice", now: now))
            for _ in 0..<20 {
                let answer = try await live.request(.GET, "/v1/users/alice/profile", headers: [("Authorization", "Bearer \(stranger)")])
                #expect(answer.status == 401)
            }
            let snapshot = access.snapshot
            await live.stop()
            #expect(first.status == 200)
            #expect(live.upstream.requestCount("/jwks.json") == 2)
            #expect(live.upstream.requestCount("/attacker.json") == 0)
            #expect(snapshot.keys == 2 && snapshot.keyRefreshes == 1)
        }
    }

    @Test func adminByScopeOrToken() async throws {
        try await withStarted { live, _, _ in
            let now = Date().timeIntervalSince1970
            let admin = TokenMinter.mint(key, claims: claims(user: "ops", now: now, ["scope": "unicache:admin"]))
            let reader = TokenMinter.mint(key, claims: claims(user: "svc", now: now, ["scp": ["unicache:read"]]))
            let event = #"{"type":"health.synced"}"#
            let byScope = try await live.request(
                .POST, "/v1/users/alice/events", headers: [("Authorization", "Bearer \(admin)")], body: event)
            let byToken = try await live.request(.POST, "/v1/users/alice/events", body: event, admin: true)
            let readerAdmin = try await live.request(
                .POST, "/v1/users/alice/events", headers: [("Authorization", "Bearer \(reader)")], body: event)
            let readerReads = try await live.request(.GET, "/v1/users/zoe/profile", headers: [("Authorization", "Bearer \(reader)")])
            await live.stop()
            #expect(byScope.status == 200)
            #expect(byToken.status == 200)
            #expect(readerAdmin.status == 403)
            #expect(readerReads.status == 200)
        }
    }

    @Test func noTokenInAnyLogLine() async throws {
        let collector = LineCollector()
        let logger = Logger(label: "unicache") { label in
            JSONLogHandler(label: label, level: .trace, output: collector.output, metadataProvider: LoggingBootstrap.requestID, clock: SystemWallClock())
        }
        try await withStarted(logger: logger) { live, _, _ in
            let now = Date().timeIntervalSince1970
            let good = TokenMinter.mint(key, claims: claims(user: "alice", now: now))
            let expired = TokenMinter.mint(key, claims: claims(user: "alice", now: now - 7200))
            for token in [good, expired, good + "x", "opaque-secret-token"] {
                _ = try await live.request(.GET, "/v1/users/alice/profile", headers: [("Authorization", "Bearer \(token)")])
                _ = try await live.request(.DELETE, "/v1/cache/k", headers: [("Authorization", "Bearer \(token)")])
            }
            await live.stop()
            #expect(!collector.lines.isEmpty)
            for line in collector.lines {
                for secret in [good, expired, "opaque-secret-token", String(good.split(separator: ".")[2])] {
                    #expect(!line.contains(secret))
                }
            }
        }
    }
}
