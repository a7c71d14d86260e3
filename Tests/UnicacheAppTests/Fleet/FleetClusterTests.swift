import Foundation
import Redis
import RedisTestSupport
import Settings
import TestSupport
import TLSTestSupport
import Testing
import UnifiedCache

import UnicacheApp

/// CONTRACT §13 through the real service: two instances with `--redis-cluster` on a six-node Redis Cluster.
@Suite(.serialized, .timeLimit(.minutes(3))) struct FleetClusterTests {
    /// §13.1–2: shared hits and every kind of invalidation across instances, on keys of different shards (so of
    /// different slots and primaries); erasure's count is summed over the shards; prefix and `all` deletes reach
    /// every primary.
    @Test func sharedHitsAndInvalidationsAcrossShards() async throws {
        try await withService(ClusterFleet.start(instances: 2)) { fleet in
            let (a, b) = (fleet.instances[0], fleet.instances[1])
            func received() -> Int { ClusterFleet.shared(b).invalidationsReceived }
            func announced(_ what: String, _ change: () async throws -> LiveService.Answer) async throws -> LiveService.Answer {
                let before = received()
                let answer = try await change()
                await waitUntil("\(what) reaches B") { received() > before }
                return answer
            }
            // Users' entries spread over several shards, and several primaries.
            let users = (0..<8).map { "u\($0)" }
            #expect(Set(users.map { ClusterFleet.shard(of: "subscription:\($0)") }).count > 2)
            for user in users {
                _ = try await announced("the fill for \(user)") { try await a.request(.GET, "/v1/users/\(user)/subscription") }
                let answer = try await b.request(.GET, "/v1/users/\(user)/subscription")
                #expect(answer.header("X-Cache-Tier") == "shared", "\(user)")
            }
            #expect(fleet.upstream.requestCount("/users/u3/subscription") == 1)

            // Raw values on keys of different shards: B holds v1 in memory; a PUT of v2 on A replaces it; a DELETE
            // removes it everywhere.
            let rawKeys = (0..<6).map { "raw\($0)" }
            #expect(Set(rawKeys.map(ClusterFleet.shard)).count > 2)
            for key in rawKeys {
                _ = try await announced("PUT \(key)") { try await a.request(.PUT, "/v1/cache/\(key)", body: "v1", admin: true) }
                #expect(try await b.request(.GET, "/v1/cache/\(key)", admin: true).body == "v1")
                _ = try await announced("PUT v2 \(key)") { try await a.request(.PUT, "/v1/cache/\(key)", body: "v2", admin: true) }
                #expect(try await b.request(.GET, "/v1/cache/\(key)", admin: true).body == "v2")
            }
            #expect(try await announced("DELETE") { try await a.request(.DELETE, "/v1/cache/raw0", admin: true) }.status == 204)
            #expect(try await b.request(.GET, "/v1/cache/raw0", admin: true).status == 404)
            #expect(try await fleet.command(fleet.entryName("raw0"), "EXISTS", fleet.entryName("raw0")) == .integer(0))

            // An event for u1 drops B's copy.
            #expect(try await b.request(.GET, "/v1/users/u1/subscription").header("X-Cache-Tier") == "memory")
            _ = try await announced("event") {
                try await a.request(.POST, "/v1/users/u1/events", body: #"{"type":"subscription.updated"}"#, admin: true)
            }
            #expect(try await b.request(.GET, "/v1/users/u1/subscription").header("X-Cache-Tier") != "memory")

            // Erasure of a user whose entries are in two shards: both removed, counted once each.
            let user = try #require(
                (0..<200).map { "e\($0)" }.first {
                    ClusterFleet.shard(of: "subscription:\($0)") != ClusterFleet.shard(of: "profile:\($0)")
                })
            _ = try await announced("fill 1") { try await a.request(.GET, "/v1/users/\(user)/subscription") }
            _ = try await announced("fill 2") { try await a.request(.GET, "/v1/users/\(user)/profile") }
            #expect(try await b.request(.GET, "/v1/users/\(user)/profile").header("X-Cache-Tier") == "shared")
            // And a raw entry under a key naming the user, stored before such puts were refused: in no user index.
            let legacy = "health:today:\(user):2026-11-29"
            _ = try await a.app.cache.put(key: legacy, body: Array("forged".utf8), ttl: .seconds(600))
            let sentBefore = ClusterFleet.shared(a).invalidationsSent
            let erased = try await announced("erasure") { try await a.request(.DELETE, "/v1/users/\(user)", admin: true) }
            #expect(erased.body == #"{"erased":3}"#)
            // One erasure announced (in each shard's log), not one more per key shape naming a user.
            #expect(ClusterFleet.shared(a).invalidationsSent - sentBefore == 1)
            for key in ["subscription:\(user)", "profile:\(user)", legacy] {
                #expect(try await fleet.command(fleet.entryName(key), "EXISTS", fleet.entryName(key)) == .integer(0))
            }
            #expect(try await b.request(.GET, "/v1/users/\(user)/profile").header("X-Cache") == "MISS")

            // A prefix delete finds the raw keys on every primary; `all` leaves no entry.
            let prefixed = try await a.request(.DELETE, "/v1/cache?prefix=raw", admin: true)
            #expect(prefixed.status < 300, "\(prefixed.body)")
            #expect(try await b.request(.GET, "/v1/cache/raw3", admin: true).status == 404)
            let entriesLeft = { () async throws -> [String] in
                try await fleet.namesInRedis().filter { name in !name.dropFirst(fleet.prefix.count).contains("}#") && !name.hasPrefix(fleet.prefix + "#") }
            }
            #expect(try await entriesLeft().allSatisfy { !$0.contains("}raw") })
            #expect(try await !entriesLeft().isEmpty)
            _ = try await announced("all") { try await a.request(.DELETE, "/v1/cache?all=true", admin: true) }
            #expect(try await entriesLeft().isEmpty)
            #expect(try await b.request(.GET, "/v1/users/u2/subscription").header("X-Cache") == "MISS")

            // /stats shows the cluster.
            let cluster = try #require(ClusterFleet.shared(a).cluster)
            #expect(cluster.nodes == 6 && cluster.slotsCovered == 16384 && cluster.mapRefreshes >= 1)
            let stats = try await a.request(.GET, "/stats")
            let document = try JSONSerialization.jsonObject(with: Data(stats.body.utf8)) as? [String: Any]
            let shared = document?["shared"] as? [String: Any]
            let shown = shared?["cluster"] as? [String: Int]
            #expect(shown?["nodes"] == 6 && shown?["slotsCovered"] == 16384)
            #expect(Set(shown?.keys.map { $0 } ?? []) == ["nodes", "slotsCovered", "moved", "ask", "mapRefreshes"])
        }
    }

    /// §13.2 with §10.2: the fleet runs on a cluster as an ACL user restricted by exactly the shipped cluster rules
    /// (deploy/redis-cluster-acl.rules): every fleet operation succeeds and no node's ACL log shows a refusal.
    @Test func everyFleetOperationRunsUnderTheShippedClusterRules() async throws {
        let prefix = "aclc\(UInt16.random(in: 0...UInt16.max)):"
        let text = try String(
            contentsOf: FleetACLTests.root.appendingPathComponent("deploy/redis-cluster-acl.rules"), encoding: .utf8)
        let line = try #require(text.split(separator: "\n").first { !$0.hasPrefix("#") && !$0.isEmpty })
        let rules = line.split(separator: " ").map { $0.replacingOccurrences(of: "unicache:", with: prefix) }
        let user = Fleet.ACLUser(name: "unicache", password: "acl-\(UUID().uuidString)", rules: rules)
        try await withService(ClusterFleet.start(instances: 2, prefix: prefix, aclUser: user)) { fleet in
            let (a, b) = (fleet.instances[0], fleet.instances[1])
            #expect(fleet.endpoint.user == "unicache")
            func received() -> Int { ClusterFleet.shared(b).invalidationsReceived }
            func announced(_ what: String, _ change: () async throws -> LiveService.Answer) async throws {
                let before = received()
                let answer = try await change()
                #expect(answer.status < 300, "\(what): \(answer.status) \(answer.body)")
                await waitUntil("\(what) reaches B") { received() > before }
            }
            try await announced("the fill") { try await a.request(.GET, "/v1/users/alice/subscription") }
            #expect(try await b.request(.GET, "/v1/users/alice/subscription").header("X-Cache-Tier") == "shared")
            try await announced("PUT") { try await a.request(.PUT, "/v1/cache/k1", body: "v1", admin: true) }
            try await announced("DELETE") { try await a.request(.DELETE, "/v1/cache/k1", admin: true) }
            _ = try await a.request(.GET, "/v1/users/bob/profile")
            try await announced("event") {
                try await a.request(.POST, "/v1/users/alice/events", body: #"{"type":"subscription.updated"}"#, admin: true)
            }
            try await announced("erasure") { try await a.request(.DELETE, "/v1/users/bob", admin: true) }
            try await announced("prefix") { try await a.request(.DELETE, "/v1/cache?prefix=profile:", admin: true) }
            try await announced("all") { try await a.request(.DELETE, "/v1/cache?all=true", admin: true) }
            var logs: [RedisReply] = []
            for node in fleet.cluster.nodes { logs.append(try await redisCommand(node, "ACL", "LOG")) }
            #expect(logs.allSatisfy { $0 == .array([]) }, "refused by the ACL rules: \(logs.map(FleetACLTests.text))")
            #expect(ClusterFleet.shared(a).errors == 0 && ClusterFleet.shared(a).authErrors == 0)

            // A wrong password is a refusal, counted in shared.authErrors (summed over the nodes and subscriptions);
            // reads go on, fleet writes answer 503.
            var wrong = fleet.endpoint
            wrong.password = "wrong-password-7f3a"
            try await withService(LiveService.start(
                upstream: (fleet.upstream, fleet.upstreamPort),
                // 2 s: the refusal must come back as WRONGPASS (counted in authErrors), not as a timeout on a loaded machine.
                redis: SharedTierSettings(redis: wrong, timeout: .seconds(2), prefix: prefix))) { live in
                #expect(try await live.request(.GET, "/v1/users/dave/subscription").status == 200)
                #expect(try await live.request(.PUT, "/v1/cache/w1", body: "x", admin: true).status == 503)
                await waitUntil("the refusals are counted") { ClusterFleet.shared(live).authErrors > 0 }
                let stats = try await live.request(.GET, "/stats")
                #expect(!stats.body.contains("wrong-password-7f3a"))
                #expect(ClusterFleet.shared(live).errors == 0 && !ClusterFleet.shared(live).connected)
            }
        }
    }

    /// §13.2 with §10.1: over TLS (`rediss://`, `tls-cluster yes`: the map names every node's TLS port), the fleet
    /// shares hits and invalidations; `/stats` says TLS.
    @Test func theFleetRunsOnAClusterOverTLS() async throws {
        let folder = try TemporaryFolder("cluster-fleet-tls")
        defer { folder.remove() }
        let pki = try TestCertificate.Authority(folder: folder.url)
        try await withService(ClusterFleet.start(instances: 2, tls: pki)) { (fleet: ClusterFleet) async throws in
            let (a, b) = (fleet.instances[0], fleet.instances[1])
            let before = ClusterFleet.shared(b).invalidationsReceived
            #expect(try await a.request(.GET, "/v1/users/tina/subscription").header("X-Cache") == "MISS")
            await waitUntil("the fill reaches B") { ClusterFleet.shared(b).invalidationsReceived > before }
            #expect(try await b.request(.GET, "/v1/users/tina/subscription").header("X-Cache-Tier") == "shared")
            for key in ["t1", "t2", "t3"] {
                let announced = ClusterFleet.shared(b).invalidationsReceived
                #expect(try await a.request(.PUT, "/v1/cache/\(key)", body: key, admin: true).status == 201)
                await waitUntil("the PUT of \(key) reaches B") { ClusterFleet.shared(b).invalidationsReceived > announced }
                #expect(try await b.request(.GET, "/v1/cache/\(key)", admin: true).body == key)
            }
            let shared = ClusterFleet.shared(a)
            #expect(shared.tls && shared.connected && shared.errors == 0 && shared.tlsErrors == 0)
        }
    }

    /// §13.4: a shared hit on a cluster is one command, a GET to the primary of the key's slot, as on one Redis (no
    /// look-up script, no second round trip).
    @Test func aSharedHitIsOneGetOnItsPrimary() async throws {
        try await withService(ClusterFleet.start(instances: 2)) { fleet in
            let (a, b) = (fleet.instances[0], fleet.instances[1])
            for instance in [a, b] { await fleet.waitUntilConnected(instance) }
            let announced = ClusterFleet.shared(b).invalidationsReceived
            var users: [String] = []
            for n in 0..<8 {
                let user = "one-trip-\(n)"
                users.append(user)
                #expect(try await a.request(.GET, "/v1/users/\(user)/subscription").header("X-Cache") == "MISS")
            }
            // A's fills announced before B reads: a message applied while a GET is out makes its entry unacceptable
            // (an invalidation may have overtaken it), and the read looks the key up again (once, `lookup`).
            await waitUntil("A's fills reach B") {
                ClusterFleet.shared(b).invalidationsReceived >= announced + users.count
            }
            let before = ClusterFleet.shared(b).operations
            var tiers: [String?] = []
            for user in users { tiers.append(try await b.request(.GET, "/v1/users/\(user)/subscription").header("X-Cache-Tier")) }
            let after = ClusterFleet.shared(b).operations

            #expect(tiers == Array(repeating: "shared", count: users.count))
            // What reads send (the instance's own announcements and checkpoints, on their timers, left out).
            let reads: Set<String> = ["get", "lookup", "lease", "store"]
            let sent = after.merging(before) { $0 - $1 }.filter { $0.value != 0 && reads.contains($0.key.operation) }
            #expect(sent == [SharedTierStatistics.Operation("get", "ok"): users.count], "\(sent)")
        }
    }

    /// §13.2 with §6.3: a stampede over both instances makes one upstream request (the fill lease in the key's shard).
    @Test func aStampedeOverTwoInstancesMakesOneUpstreamRequest() async throws {
        try await withService(ClusterFleet.start(instances: 2)) { fleet in
            let answers = try await Fleet.stampede(40, on: fleet.instances, upstream: fleet.upstream)
            #expect(fleet.upstream.requestCount("/users/crowd/subscription") == 1)
            #expect(answers.allSatisfy { $0.status == 200 && $0.body == #"{"plan":"pro"}"# })
            #expect(answers.filter { $0.header("X-Cache") == "MISS" }.count == 1)
        }
    }
}
