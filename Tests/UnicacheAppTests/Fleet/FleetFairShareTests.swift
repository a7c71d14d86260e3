import Foundation
import Settings
import TestSupport
import Testing
import UpstreamGate

import UnicacheApp

/// CONTRACT §15.2 with §6.3: one user's share of a budget is counted for the whole fleet, so spreading requests over
/// the instances buys no more of it, and another user's request is still fetched.
@Suite(.serialized, .timeLimit(.minutes(2))) struct FleetFairShareTests {
    @Test func aUsersShareCountsTheWholeFleet() async throws {
        let budget = RateWindow(limit: 20, window: .seconds(60))
        try await withService(Fleet.start(instances: 2, protection: [.subscription: UpstreamProtection(budgets: [budget])])) { fleet in
            var answers: [LiveService.Answer] = []
            for attempt in 0..<10 {
                answers.append(
                    try await fleet.instances[attempt % 2].request(.GET, "/v1/users/mallory/subscription?refresh=true"))
            }
            let victim = try await fleet.instances[1].request(.GET, "/v1/users/victim/subscription")
            await fleet.stop()
            #expect(fleet.upstream.requestCount("/users/mallory/subscription") == 2)
            let refused = answers.filter { $0.status == 429 || $0.header("X-Cache") == "STALE" }
            #expect(refused.count == 8)
            #expect(victim.status == 200 && victim.header("X-Cache") == "MISS")
        }
    }
}
