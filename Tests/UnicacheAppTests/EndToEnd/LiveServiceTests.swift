import Foundation
@testable import Settings
import TestSupport
import Testing

@testable import UnicacheApp

/// The contract end to end: the real server, the real HTTP upstream fetcher, a test upstream on 127.0.0.1.
@Suite(.timeLimit(.minutes(10)), .serialized) struct LiveServiceTests {
    @Test func missThenHitAndTheNormalisedUpstreamRequest() async throws {
        try await withService(LiveService.start()) { live in
            let first = try await live.request(.GET, "/v1/users/alice/activities?types=Run,ride,run&days=30")
            let second = try await live.request(.GET, "/v1/users/alice/activities?days=30&types=ride,run")
            await live.stop()
            #expect(first.status == 200 && first.header("X-Cache") == "MISS")
            #expect(second.header("X-Cache") == "HIT")
            #expect(second.body == first.body)
            #expect(live.upstream.requestTargets == ["/users/alice/activities?days=30&types=ride,run"])
        }
    }

    /// Every answer carries one `Date` (RFC 9110 §6.6.1): a rendered read-through answer its own, of the second it
    /// is answered in, and every other one the server's.
    @Test func everyAnswerCarriesOneDateOfNow() async throws {
        try await withService(LiveService.start()) { live in
            let before = Date()
            let miss = try await live.request(.GET, "/v1/users/alice/subscription")
            let hit = try await live.request(.GET, "/v1/users/alice/subscription")
            let head = try await live.request(.HEAD, "/v1/users/alice/subscription")
            let conditional = try await live.request(
                .GET, "/v1/users/alice/subscription", headers: [("If-None-Match", hit.header("ETag") ?? "")])
            let missing = try await live.request(.GET, "/v1/nope")
            let health = try await live.request(.GET, "/healthz")
            let after = Date()
            await live.stop()
            #expect(hit.header("X-Cache") == "HIT" && conditional.status == 304 && missing.status == 404)
            let formatter = DateFormatter()
            formatter.locale = Locale(identifier: "en_US_POSIX")
            formatter.timeZone = TimeZone(identifier: "GMT")
            formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
            for answer in [miss, hit, head, conditional, missing, health] {
                let dates = answer.values("Date")
                #expect(dates.count == 1, "\(answer.status): \(dates)")
                let date = try #require(dates.first.flatMap(formatter.date(from:)), "\(dates)")
                #expect(date >= before.addingTimeInterval(-1) && date <= after, "\(dates)")
            }
        }
    }

    /// A service that cannot listen (its port taken) fails to start and closes what it built: an upstream client
    /// dropped open stops a debug process (async-http-client's check), this test's with it.
    @Test func aServiceThatCannotListenFailsAndClosesItsUpstreamClient() async throws {
        try await withService(LiveService.start()) { live in
            await #expect {
                try await LiveService.start(port: live.port)
            } throws: { error in
                "\(error)".contains("Address already in use")
            }
            let health = try await live.request(.GET, "/healthz")
            await live.stop()
            #expect(health.status == 200)
        }
    }

    @Test func upstreamBodyIsServedByteForByte() async throws {
        try await withService(LiveService.start()) { live in
            let body = #"{ "status" : "active",  "plan":"yearly" , "odd":"\u00e9" }"#
            live.upstream.reply("/users/alice/subscription", .json(body))
            let answer = try await live.request(.GET, "/v1/users/alice/subscription")
            await live.stop()
            #expect(answer.body == body)
        }
    }

    @Test func stampedeOfColdRequestsMakesOneUpstreamRequestWhileWarmKeysAnswer() async throws {
        try await withService(LiveService.start()) { live in
            _ = try await live.request(.GET, "/v1/users/bob/profile")
            let latch = Latch()
            live.upstream.set("/users/alice/profile", .gated(latch, .json(#"{"name":"alice"}"#)))
            let statuses = try await withThrowingTaskGroup(of: String.self) { group in
                for _ in 0..<200 {
                    group.addTask { try await live.request(.GET, "/v1/users/alice/profile").header("X-Cache") ?? "" }
                }
                await live.upstream.waitForRequests("/users/alice/profile", count: 1)
                // The upstream is held back: a warm key must still answer.
                let warm = try await live.request(.GET, "/v1/users/bob/profile")
                #expect(warm.header("X-Cache") == "HIT")
                latch.open()
                var all: [String] = []
                for try await status in group { all.append(status) }
                return all
            }
            await live.stop()
            #expect(live.upstream.requestCount("/users/alice/profile") == 1)
            #expect(statuses.count == 200)
            #expect(statuses.filter { $0 == "MISS" }.count == 1)
            #expect(statuses.allSatisfy { ["MISS", "COALESCED", "HIT"].contains($0) })
        }
    }

    @Test func upstreamFailuresMapToTheContract() async throws {
        try await withService(LiveService.start()) { live in
            live.upstream.reply("/users/a/profile", .serverError)
            live.upstream.reply("/users/b/profile", .rateLimited(retryAfter: "7"))
            live.upstream.reply("/users/c/profile", .notFound)
            live.upstream.reply("/users/d/profile", .noStore(#"{"x":1}"#))
            let failed = try await live.request(.GET, "/v1/users/a/profile")
            let missing = try await live.request(.GET, "/v1/users/c/profile")
            let missingAgain = try await live.request(.GET, "/v1/users/c/profile")
            _ = try await live.request(.GET, "/v1/users/d/profile")
            let noStore = try await live.request(.GET, "/v1/users/d/profile")
            // Last: a 429 pauses the whole domain (CONTRACT §7.2), so another key is not fetched meanwhile.
            let limited = try await live.request(.GET, "/v1/users/b/profile")
            let paused = try await live.request(.GET, "/v1/users/e/profile")
            await live.stop()
            #expect(failed.status == 502 && failed.header("Content-Type") == "application/problem+json")
            #expect(missing.status == 404 && missingAgain.status == 404)
            #expect(live.upstream.requestCount("/users/c/profile") == 1)
            #expect(noStore.header("X-Cache") == "MISS")
            #expect(live.upstream.requestCount("/users/d/profile") == 2)
            #expect(limited.status == 503 && limited.header("Retry-After") == "7")
            #expect(paused.status == 503 && paused.header("Content-Type") == "application/problem+json")
            #expect(paused.header("Retry-After").flatMap(Int.init).map { (1...7).contains($0) } == true)
            #expect(live.upstream.requestCount("/users/e/profile") == 0)
        }
    }

    @Test func staleIfErrorAfterARefreshFails() async throws {
        try await withService(LiveService.start()) { live in
            let good = try await live.request(.GET, "/v1/users/alice/progress/streak")
            live.upstream.reply("/users/alice/progress/streak", .serverError)
            let stale = try await live.request(.GET, "/v1/users/alice/progress/streak?refresh=true")
            await live.stop()
            #expect(stale.status == 200)
            #expect(stale.header("X-Cache") == "STALE")
            #expect(stale.body == good.body)
        }
    }

    @Test func hostileUsersAndKeysAre400AndCreateNoFiles() async throws {
        let base = try TemporaryFolder("unicache-live"), dataDir = base.file("data")
        defer { base.remove() }
        try FileManager.default.createDirectory(atPath: dataDir, withIntermediateDirectories: true)
        try await withService(LiveService.start(dataDir: dataDir)) { live in
            let targets = [
                "/v1/users/../subscription", "/v1/users/%2e%2e/subscription", "/v1/users/a%2Fb/subscription",
                "/v1/users/a%00b/subscription", "/v1/users/\(String(repeating: "u", count: 129))/subscription",
            ]
            var statuses: [Int] = []
            for target in targets { statuses.append(try await live.request(.GET, target).status) }
            for key in ["..", "%2e%2e", "a%2F..%2Fescape", "a%00b", String(repeating: "k", count: 513)] {
                statuses.append(try await live.request(.PUT, "/v1/cache/\(key)", body: "x", admin: true).status)
            }
            await live.stop()
            #expect(statuses.allSatisfy { $0 == 400 }, "\(statuses)")
            #expect(try FileManager.default.contentsOfDirectory(atPath: base.path) == ["data"])
        }
    }

    @Test func restartedServiceServesDiskHits() async throws {
        let folder = try TemporaryFolder("unicache-live"), dataDir = folder.file("data")
        defer { folder.remove() }
        try await withService(LiveService.start(dataDir: dataDir)) { first in
            let original = try await first.request(.GET, "/v1/users/alice/profile")
            await first.stop()
            try await withService(LiveService.start(dataDir: dataDir)) { second in
                let again = try await second.request(.GET, "/v1/users/alice/profile")
                await second.stop()
                #expect(again.header("X-Cache") == "HIT")
                #expect(again.header("X-Cache-Tier") == "disk")
                #expect(again.body == original.body)
                #expect(second.upstream.requestCount("/users/alice/profile") == 0)
            }
        }
    }

    /// A second service on a data dir another one runs on stops at start-up naming the holder: it would have swept
    /// the first one's writes in progress as a crash's leftovers. Once the first has stopped, the folder is free.
    @Test func aSecondServiceOnTheSameDataDirStopsAtStartUp() async throws {
        let folder = try TemporaryFolder("unicache-live"), dataDir = folder.file("data")
        defer { folder.remove() }
        try await withService(LiveService.start(dataDir: dataDir)) { first in
            var refusal = "none"
            do {
                try await LiveService.start(dataDir: dataDir).stop()
            } catch {
                refusal = "\(error)"
            }
            _ = try await first.request(.PUT, "/v1/cache/k", body: "{}", admin: true)
            let kept = try await first.request(.GET, "/v1/cache/k", admin: true)
            await first.stop()
            #expect(refusal.contains("is in use by another running unicache (pid \(getpid()))"), "\(refusal)")
            #expect(kept.status == 200)
            try await withService(LiveService.start(dataDir: dataDir)) { second in
                let again = try await second.request(.GET, "/v1/cache/k", admin: true)
                await second.stop()
                #expect(again.status == 200)
            }
        }
    }
}
