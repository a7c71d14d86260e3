import Foundation
@testable import Settings
import Testing
import TestSupport
import UnifiedCache
import UpstreamGate

@testable import UnicacheApp

/// The families deploy/alerts.yml and deploy/grafana/unicache.json need beyond the contract's, on a live service.
@Suite(.timeLimit(.minutes(10)), .serialized) struct OperatorMetricsTests {
    @Test func budgetsHitsByTierAndErrorCountersAreExported() async throws {
        let budget = RateWindow(limit: 5, window: .seconds(600))
        try await withService(LiveService.start(protection: [.subscription: UpstreamProtection(budgets: [budget])])) { live in
            let miss = try await live.request(.GET, "/v1/users/a/subscription")
            let hit = try await live.request(.GET, "/v1/users/a/subscription")
            let metrics = try await live.request(.GET, "/metrics").body
            let stats = try #require(try JSONSerialization.jsonObject(with: Data(try await live.request(.GET, "/stats").body.utf8)) as? [String: Any])
            await live.stop()

            #expect(miss.header("X-Cache") == "MISS" && hit.header("X-Cache") == "HIT")
            let lines = Set(metrics.split(separator: "\n").map(String.init))
            #expect(lines.contains(#"unicache_upstream_budget_remaining{domain="subscription"} 4.0"#))
            #expect(lines.contains(#"unicache_upstream_budget_limit{domain="subscription"} 5.0"#))
            // Only domains with a budget have budget series.
            #expect(!metrics.contains(#"unicache_upstream_budget_remaining{domain="activities"}"#))
            #expect(lines.contains(#"unicache_cache_tier_hits_total{tier="memory"} 1"#))
            #expect(lines.contains(#"unicache_cache_tier_hits_total{tier="disk"} 0"#))
            #expect(lines.contains(#"unicache_cache_tier_hits_total{tier="shared"} 0"#))
            #expect(lines.contains("unicache_disk_write_errors_total 0"))
            #expect(lines.contains("unicache_auth_key_errors_total 0"))
            #expect(lines.contains { $0.hasPrefix(#"unicache_cache_limit_bytes{tier="memory"} "#) })
            let cache = try #require(stats["cache"] as? [String: Any])
            let tiers = try #require(cache["hitsByTier"] as? [String: Int])
            #expect(tiers == ["memory": 1, "disk": 0, "shared": 0])
            #expect(cache["hits"] as? Int == 1)
        }
    }

    /// The memory tier's policy decisions reach `/stats` and `/metrics`: in a tier of two entries, a third user's
    /// entry pushes the second one out of the window, and the sketch turns it away (it was asked for no more often
    /// than the entry it would replace).
    @Test func admissionsAreCountedByTier() async throws {
        try await withService(LiveService.start(memory: MemoryTierConfiguration(maxEntries: 2))) { live in
            for user in ["a", "a", "b", "c"] { _ = try await live.request(.GET, "/v1/users/\(user)/subscription") }
            let metrics = try await live.request(.GET, "/metrics").body
            let stats = try #require(try JSONSerialization.jsonObject(with: Data(try await live.request(.GET, "/stats").body.utf8)) as? [String: Any])
            await live.stop()

            let memory = try #require(stats["memory"] as? [String: Any])
            #expect(memory["admitted"] as? Int == 1 && memory["rejected"] as? Int == 1 && memory["evictions"] as? Int == 1)
            #expect(memory["window"] as? Double == 0.01)
            let disk = try #require(stats["disk"] as? [String: Any])
            #expect(disk["admitted"] as? Int == 0 && disk["window"] is NSNull)
            let lines = Set(metrics.split(separator: "\n").map(String.init))
            #expect(lines.contains(#"unicache_tier_admissions_total{tier="memory",result="admitted"} 1"#))
            #expect(lines.contains(#"unicache_tier_admissions_total{tier="memory",result="rejected"} 1"#))
            #expect(lines.contains(#"unicache_tier_admissions_total{tier="disk",result="rejected"} 0"#))
        }
    }
}
