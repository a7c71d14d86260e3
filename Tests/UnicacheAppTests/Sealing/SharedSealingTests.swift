import Foundation
import Redis
import RedisTestSupport
import RedisTier
@testable import Settings
import TestSupport
import Testing

@testable import UnicacheApp

/// CONTRACT §9.2 and §9.6 in the shared tier: a value moved to another Redis key is never served, and two
/// instances with different key rings on one Redis each treat the other's values as misses; `/stats` and
/// `/metrics` say so, and name the primary key's ID, never a key.
@Suite(.serialized, .timeLimit(.minutes(10))) struct SharedSealingTests {
    let prefix = "ss:"

    func start(_ redis: RedisServerProcess, ring: String?, upstream: (TestUpstream, port: Int)? = nil) async throws -> LiveService {
        try await LiveService.starting(redis: redis, prefix: prefix, keyFile: ring, upstream: upstream)
    }

    @Test func aValueCopiedToAnotherKeyIsNeverServed() async throws {
        let redis = try await RedisServerProcess.start()
        try await withService(start(redis, ring: try AtRest.keyFile("k1"))) { writer in
            #expect(try await writer.request(.PUT, "/v1/cache/acct:a", body: "alice's", admin: true).status == 201)
            #expect(try await writer.request(.PUT, "/v1/cache/acct:b", body: "bob's", admin: true).status == 201)
            await writer.stop()
            guard case .string(let value) = try await redisCommand(redis, "GET", prefix + "acct:a") else {
                Issue.record("no value in Redis")
                return
            }
            _ = try await redisCommand(redis, [Array("SET".utf8), Array((prefix + "acct:b").utf8), value])
            _ = try await redisCommand(redis, [Array("SET".utf8), Array((prefix + "acct:c").utf8), value])

            try await withService(start(redis, ring: try AtRest.keyFile("k1"))) { reader in
                let b = try await reader.request(.GET, "/v1/cache/acct:b", admin: true)
                let c = try await reader.request(.GET, "/v1/cache/acct:c", admin: true)
                let a = try await reader.request(.GET, "/v1/cache/acct:a", admin: true)
                let statistics = reader.app.cache.statistics().shared
                await reader.stop()
                #expect(b.status == 404)
                #expect(c.status == 404)
                #expect(a.body == "alice's")
                #expect(statistics?.undecryptable == 2)
                #expect(statistics?.corrupt == 0)
                #expect(try await redisCommand(redis, "EXISTS", prefix + "acct:b") == .integer(0))
                await redis.stop()
            }
        }
    }

    @Test func twoRingsOnOneRedisTreatEachOthersValuesAsMisses() async throws {
        let redis = try await RedisServerProcess.start()
        let upstream = TestUpstream()
        let port = try await upstream.start()
        try await withService(start(redis, ring: try AtRest.keyFile("fleetA"), upstream: (upstream, port))) { a in
            // The same key ID with another secret: only the tag can tell.
            try await withService(start(
                redis, ring: try AtRest.keyFile([("fleetA", Array(repeating: 7, count: 32))]), upstream: (upstream, port))) { b in

                #expect(try await a.request(.PUT, "/v1/cache/shared:x", body: "from A", admin: true).status == 201)
                #expect(try await b.request(.GET, "/v1/cache/shared:x", admin: true).status == 404)
                let first = try await a.request(.GET, "/v1/users/carol/subscription")
                // A writes its fetch to Redis behind the answer: B must find it there.
                try await waitUntil("A's value is in Redis") {
                    try await redisCommand(redis, "EXISTS", prefix + "subscription:carol") == .integer(1)
                }
                let second = try await b.request(.GET, "/v1/users/carol/subscription")
                let stats = try await b.request(.GET, "/stats")
                let metrics = try await b.request(.GET, "/metrics")
                let bShared = b.app.cache.statistics().shared
                await a.stop()
                await b.stop()
                await upstream.shutdown()
                await redis.stop()

                #expect(first.header("X-Cache") == "MISS")
                #expect(second.status == 200)
                #expect(second.header("X-Cache") == "MISS")
                #expect(upstream.requestCount("/users/carol/subscription") == 2)
                #expect(bShared?.undecryptable == 2)
                let document = try #require(try JSONSerialization.jsonObject(with: Data(stats.body.utf8)) as? [String: Any])
                let encryption = try #require(document["encryption"] as? [String: Any])
                #expect(encryption["enabled"] as? Bool == true)
                #expect(encryption["primaryKey"] as? String == "fleetA")
                #expect((document["shared"] as? [String: Any])?["undecryptable"] as? Int == 2)
                #expect((document["disk"] as? [String: Any])?["undecryptable"] as? Int == 0)
                #expect(metrics.body.contains(#"unicache_undecryptable_total{tier="shared"} 2"#))
                let key = Data(repeating: 7, count: 32).base64EncodedString()
                #expect(!stats.body.contains(key) && !metrics.body.contains(key))
            }
        }
    }
}
