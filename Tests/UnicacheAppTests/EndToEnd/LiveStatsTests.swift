import Foundation
@testable import Settings
import TestSupport
import Testing

@testable import UnicacheApp

/// CONTRACT §5 end to end: a scripted sequence of known hits, misses, coalesced, stale and refreshes moves
/// /stats by exactly those amounts, and `upstream.fetches` equals what the test upstream itself received.
@Suite(.timeLimit(.minutes(10)), .serialized) struct LiveStatsTests {
    @Test func statsDeltasMatchAScriptedSequence() async throws {
        try await withService(LiveService.start()) { live in
            let before = try await Self.stats(live)

            _ = try await live.request(.GET, "/v1/users/s/profile")  // miss
            _ = try await live.request(.GET, "/v1/users/s/profile")  // hit
            _ = try await live.request(.GET, "/v1/users/s/profile?refresh=true")  // refresh
            live.upstream.reply("/users/s/profile", .serverError)
            _ = try await live.request(.GET, "/v1/users/s/profile?refresh=true")  // stale (upstream error)
            _ = try await live.request(.GET, "/v1/users/s/subscription", headers: [("Cache-Control", "only-if-cached")])  // none

            let latch = Latch()
            live.upstream.set("/users/s/progress/streak", .gated(latch, .json(#"{"current":1}"#)))
            try await withThrowingTaskGroup(of: Void.self) { group in
                for _ in 0..<5 { group.addTask { _ = try await live.request(.GET, "/v1/users/s/progress/streak") } }
                await live.upstream.waitForRequests("/users/s/progress/streak", count: 1)
                await waitUntil("4 requests join the load") { live.app.cache.coalescedWaiters(for: "progress:streak:s") >= 4 }
                latch.open()
                try await group.waitForAll()
            }  // 1 miss + 4 coalesced

            let after = try await Self.stats(live)
            let upstreamRequests = live.upstream.requestTargets.count
            await live.stop()

            func delta(_ name: String) -> Int { (after.cache[name] as? Int ?? 0) - (before.cache[name] as? Int ?? 0) }
            #expect(delta("misses") == 2)
            #expect(delta("hits") == 1)
            #expect(delta("refreshes") == 1)
            #expect(delta("stale") == 1)
            #expect(delta("coalesced") == 4)
            #expect(after.upstreamFetches == upstreamRequests)
            #expect(upstreamRequests == 4)  // profile: miss, refresh, failed refresh; streak: one shared fetch
            let profile = try #require(after.namespaces["profile"])
            #expect(profile["misses"] as? Int == 1 && profile["stale"] as? Int == 1 && profile["refreshes"] as? Int == 1)
        }
    }

    struct Snapshot {
        var cache: [String: Any]
        var namespaces: [String: [String: Any]]
        var upstreamFetches: Int
    }

    static func stats(_ live: LiveService) async throws -> Snapshot {
        let answer = try await live.request(.GET, "/stats")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])
        return Snapshot(
            cache: json["cache"] as? [String: Any] ?? [:],
            namespaces: json["namespaces"] as? [String: [String: Any]] ?? [:],
            upstreamFetches: (json["upstream"] as? [String: Any])?["fetches"] as? Int ?? -1)
    }
}
