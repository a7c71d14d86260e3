import Foundation
import NIOConcurrencyHelpers
import Redis
import RedisTestSupport
import Settings
import TestSupport
import Testing
import UnifiedCache

import UnicacheApp

/// CONTRACT §10.3: an instance on `redis-sentinel://` (a primary, a replica, three Sentinels) whose primary is
/// killed mid-traffic. It follows the promotion without a restart: fleet writes succeed again within 2 s of it,
/// reads never answer 5xx meanwhile, the switch is counted and the new primary named in /stats, and the instance is
/// back in step with the fleet (caught up from the new primary's log).
@Suite("The fleet through a Sentinel failover", .serialized, .timeLimit(.minutes(3)))
struct FleetSentinelTests {
    @Test func aKilledPrimaryIsFollowedAndFleetWritesComeBackWithinTwoSeconds() async throws {
        try await withService(SentinelGroup.start()) { group in try await run(group) }
    }

    private func run(_ group: SentinelGroup) async throws {
        #expect(try await group.waitUntilReadyForFailover(), "the Sentinel group never saw the replica in sync")
        let endpoint = try RedisEndpoint(url: group.url)
        try await withService(LiveService.start(
            upstreamTimeout: .seconds(5),
            // Fleet.start's 2 s: the commands before the kill and after the promotion must not time out on a loaded
            // machine (the kill itself resets the primary's connections at once, no timeout is waited for).
            redis: SharedTierSettings(redis: endpoint, timeout: .seconds(2), prefix: "sentinel:"))) { live in
            await waitUntil("the shared tier is connected") { Fleet.shared(live).connected }
            #expect(Fleet.shared(live).endpoint == "127.0.0.1:\(group.primary.port)")
            #expect(try await live.request(.PUT, "/v1/cache/before", body: "1", admin: true).status < 300)
            // Replicated before the primary dies: otherwise the new primary's log cannot vouch for it, and the
            // instance rightly resets (drops its local copy) after the switch.
            #expect(await group.replicated(), "the replica did not acknowledge the write")

            // The test's own ear on the Sentinels: when the promotion happened. Its PINGs are rare: a test process
            // whose tasks stall for seconds on a loaded machine must not take its own delay for a silent Sentinel.
            let sentinel = RedisSentinel(
                sentinels: group.sentinels.map { RedisEndpoint.Address(host: "127.0.0.1", port: $0.port) },
                masterName: SentinelGroup.masterName, timeout: .seconds(5), watchPingInterval: .seconds(30))
            let watcher = try await sentinel.watch(clock: ContinuousClock())

            // Reads all through the failover: never a 5xx.
            let readStatuses = NIOLockedValueBox<[Int]>([])
            let reads = Task {
                var user = 0
                while !Task.isCancelled {
                    user += 1
                    if let answer = try? await live.request(.GET, "/v1/users/s\(user % 20)/subscription") {
                        readStatuses.withLockedValue { $0.append(answer.status) }
                    }
                }
            }
            await group.primary.kill()
            // Bounded below the test's time limit, so that a failover that never comes is told with the Sentinels' logs.
            let patience = Task {
                try await Task.sleep(for: .seconds(60))
                await watcher.close()
            }
            var switches = watcher.switches.makeAsyncIterator()
            let announced = await switches.next()
            patience.cancel()
            await watcher.close()
            #expect(
                announced?.new.port == group.replica.port,
                "\(String(describing: announced)), watch ended: \(watcher.endReason ?? "-"); \(group.logs)")

            // From the promotion, a fleet write succeeds within 2 s.
            var write = 0
            let written = try await poll(within: .seconds(2)) {
                write += 1
                return try await live.request(.PUT, "/v1/cache/after\(write)", body: "2", admin: true).status < 300
            }
            #expect(written, "no fleet write succeeded within 2 s of the promotion")
            await waitUntil("back in step with the fleet") { Fleet.shared(live).connected }
            reads.cancel()
            _ = await reads.value
            let shared = Fleet.shared(live)
            let before = try await live.request(.GET, "/v1/cache/before", admin: true)
            await live.stop()
            #expect(readStatuses.withLockedValue { $0 }.allSatisfy { $0 < 500 }, "\(readStatuses.withLockedValue { $0 })")
            #expect(!readStatuses.withLockedValue { $0 }.isEmpty)
            #expect(shared.failovers == 1)
            #expect(shared.endpoint == "127.0.0.1:\(group.replica.port)")
            #expect(before.status == 200 && before.body == "1", "\(before.status) \(before.body)")
        }
    }
}
