import Foundation
import Redis
import RedisTestSupport
import Settings
import Testing
import TestSupport
import UnifiedCache
import UpstreamGate

import UnicacheApp

/// CONTRACT §10.2: the fleet runs as an ACL user restricted by exactly the rules the project ships
/// (deploy/redis-acl.rules), with the default user's password kept for the test's own look-ups: every fleet operation
/// succeeds, and Redis's ACL log shows no command, key or channel refused.
@Suite("The fleet as an ACL user", .serialized, .timeLimit(.minutes(3)))
struct FleetACLTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    /// The shipped rules with the test fleet's prefix in place of `unicache:`.
    static func rules(prefix: String) throws -> [String] {
        let text = try String(contentsOf: root.appendingPathComponent("deploy/redis-acl.rules"), encoding: .utf8)
        let line = try #require(text.split(separator: "\n").first { !$0.hasPrefix("#") && !$0.isEmpty })
        return line.split(separator: " ").map { $0.replacingOccurrences(of: "unicache:", with: prefix) }
    }

    /// A reply as text (ACL LOG's entries name what was refused).
    static func text(_ reply: RedisReply) -> String {
        switch reply {
        case .string(let bytes): String(decoding: bytes, as: UTF8.self)
        case .status(let text): text
        case .error(let error): error.message
        case .integer(let value): "\(value)"
        case .array(let items): "[" + items.map(text).joined(separator: " ") + "]"
        case .null: "null"
        }
    }

    @Test func everyFleetOperationRunsUnderTheShippedRules() async throws {
        let prefix = "acl\(UInt16.random(in: 0...UInt16.max)):"
        let user = Fleet.ACLUser(name: "unicache", password: "acl-\(UUID().uuidString)", rules: try Self.rules(prefix: prefix))
        let budget = RateWindow(limit: 100, window: .seconds(60))
        try await withService(Fleet.start(
            instances: 2, password: "admin-\(UUID().uuidString)", protection: [.subscription: UpstreamProtection(budgets: [budget])],
            prefix: prefix, aclUser: user)) { fleet in
            let (a, b) = (fleet.instances[0], fleet.instances[1])
            #expect(fleet.serviceEndpoint.user == "unicache")
            func received() -> Int { Fleet.shared(b).invalidationsReceived }
            func announced(_ what: String, _ change: () async throws -> LiveService.Answer) async throws -> LiveService.Answer {
                let before = received()
                let answer = try await change()
                #expect(answer.status < 300, "\(what): \(answer.status) \(answer.body)")
                await waitUntil("\(what) reaches B") { received() > before }
                return answer
            }

            // A fill (fill lease, store script, user index, log, publish) under a fleet budget (rate script)...
            _ = try await announced("the fill") { try await a.request(.GET, "/v1/users/alice/subscription") }
            // ...a shared hit on the other instance...
            let shared = try await b.request(.GET, "/v1/users/alice/subscription")
            #expect(shared.header("X-Cache-Tier") == "shared", "\(shared.headers)")
            // ...raw values, events, erasure, prefix and all deletes (delete scripts, SCAN), each announced.
            _ = try await announced("PUT") { try await a.request(.PUT, "/v1/cache/k1", body: "v1", admin: true) }
            #expect(try await b.request(.GET, "/v1/cache/k1", admin: true).body == "v1")
            _ = try await announced("DELETE") { try await a.request(.DELETE, "/v1/cache/k1", admin: true) }
            _ = try await a.request(.GET, "/v1/users/bob/profile")
            _ = try await announced("event") {
                try await a.request(.POST, "/v1/users/alice/events", body: #"{"type":"subscription.updated"}"#, admin: true)
            }
            _ = try await announced("erasure") { try await a.request(.DELETE, "/v1/users/bob", admin: true) }
            _ = try await announced("prefix") { try await a.request(.DELETE, "/v1/cache?prefix=profile:", admin: true) }
            _ = try await announced("all") { try await a.request(.DELETE, "/v1/cache?all=true", admin: true) }
            // A restarted instance catches up from the log (XRANGE) as the same user.
            try await withService(fleet.startInstance()) { late in
                #expect(try await late.request(.GET, "/v1/users/carol/subscription").status == 200)

                let log = try await redisCommand(fleet.redis, "ACL", "LOG")
                let statsA = Fleet.shared(a)
                await late.stop()
                await fleet.stop()
                #expect(log == .array([]), "refused by the ACL rules: \(Self.text(log))")
                #expect(statsA.errors == 0)
            }
        }
    }

    /// A refused AUTH (a wrong password) is a connection that failed: reads go on from local tiers and the upstream,
    /// fleet writes answer 503, and nothing says the password.
    @Test func aWrongPasswordIsAFailedConnection() async throws {
        let prefix = "acl\(UInt16.random(in: 0...UInt16.max)):"
        try await withService(Fleet.start(
            instances: 1, password: "admin-\(UUID().uuidString)", prefix: prefix,
            aclUser: Fleet.ACLUser(name: "unicache", password: "right", rules: try Self.rules(prefix: prefix)))) { fleet in
            var wrong = fleet.serviceEndpoint
            wrong.password = "wrong-password-7f3a"
            try await withService(LiveService.start(
                upstream: (fleet.upstream, fleet.upstreamPort),
                redis: Fleet.tierConfiguration(wrong, timeout: .seconds(2), prefix: prefix))) { live in
                let read = try await live.request(.GET, "/v1/users/dave/subscription")
                let write = try await live.request(.PUT, "/v1/cache/w1", body: "x", admin: true)
                let ready = try await live.request(.GET, "/readyz")
                let stats = try await live.request(.GET, "/stats")
                await live.stop()
                await fleet.stop()
                #expect(read.status == 200)
                #expect(write.status == 503)
                #expect(ready.status == 200 && ready.body.contains("unreachable"))
                #expect(!stats.body.contains("wrong-password-7f3a"))
            }
        }
    }

    /// A refusal of the user's credentials or permissions is a configuration to fix, not an outage: counted in
    /// `shared.authErrors` and not in `shared.errors`, whether it is a wrong password (`WRONGPASS` to AUTH), rules
    /// that do not grant the prefix (`NOPERM` to every command and to SUBSCRIBE), or rules without the channels
    /// (`NOPERM` to SUBSCRIBE, and the `ERR` Redis 7.0 gives the store script for its `PUBLISH`: `EVAL`); the
    /// warning names the user, once per back-off, and no log line, `/stats` or problem says the password or repeats
    /// Redis's text.
    @Test(arguments: ["WRONGPASS", "NOPERM", "EVAL"])
    func aRefusedUserCountsAsAnAuthErrorNotAnError(_ refusal: String) async throws {
        let prefix = "acl\(UInt16.random(in: 0...UInt16.max)):"
        let password = "right-\(UUID().uuidString)"
        // NOPERM: the shipped rules for another prefix; WRONGPASS: the right rules, a wrong password; EVAL: the right
        // rules without their channels.
        let rules = try Self.rules(prefix: refusal == "NOPERM" ? "elsewhere:" : prefix).filter {
            refusal != "EVAL" || !$0.hasPrefix("&")
        }
        let store = CapturingLogHandler.Store()
        try await withService(Fleet.start(
            instances: 0, password: "admin-\(UUID().uuidString)", prefix: prefix,
            aclUser: Fleet.ACLUser(name: "unicache", password: password, rules: rules))) { fleet in
            var endpoint = fleet.serviceEndpoint
            if refusal == "WRONGPASS" { endpoint.password = "wrong-password-7f3a" }
            try await withService(LiveService.start(
                logger: CapturingLogHandler.logger(store), upstream: (fleet.upstream, fleet.upstreamPort),
                redis: Fleet.tierConfiguration(endpoint, timeout: .seconds(1), prefix: prefix))) { live in
                for index in 0..<5 {
                    #expect(try await live.request(.GET, "/v1/users/erin\(index)/subscription").status == 200)
                }
                let write = try await live.request(.PUT, "/v1/cache/w1", body: "x", admin: true)
                await waitUntil("the refusal is counted") { Fleet.shared(live).authErrors > 0 }
                let stats = try await live.request(.GET, "/stats")
                let shared = Fleet.shared(live)
                await live.stop()
                await fleet.stop()
                #expect(write.status == 503)
                #expect(shared.errors == 0, "\(shared.operations)")
                #expect(shared.authErrors > 0)
                if refusal == "EVAL" {
                    #expect(write.body.contains("ACL rules"), "\(write.body)")
                    // Redis answered: the problem says it did not take the change, not that it cannot be reached.
                    #expect(write.body.contains("did not take this change"), "\(write.body)")
                    #expect(!write.body.contains("cannot be reached"), "\(write.body)")
                }
                let lines = store.rendered
                let warnings = lines.filter { $0.contains("refused") && $0.contains("unicache") && $0.contains(refusal) }
                #expect(!warnings.isEmpty, "\(lines)")
                for text in lines + [stats.body, write.body] {
                    #expect(!text.contains(password) && !text.contains("wrong-password-7f3a"))
                    #expect(!text.contains("invalid username-password pair"))
                }
            }
        }
    }
}
