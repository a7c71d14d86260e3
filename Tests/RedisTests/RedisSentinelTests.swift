import Foundation
@testable import Redis
import RedisTestSupport
import TestSupport
import Testing

@Suite("Sentinel discovery and failover")
struct RedisSentinelTests {
    /// The two announcements a failover is followed by, as Sentinel 7 words them; another channel or another group
    /// is not a switch of this one, and a malformed one is refused.
    @Test func theAnnouncementsOfASwitchAreRead() throws {
        let expected = RedisSentinelSwitch(
            masterName: "unicache", old: .init(host: "10.0.0.1", port: 6379), new: .init(host: "10.0.0.2", port: 6380))
        func read(_ channel: String, _ text: String) throws(RedisError) -> RedisSentinelSwitch? {
            try RedisSentinelSwitch(channel: channel, payload: Array(text.utf8), masterName: "unicache")
        }
        #expect(try read("+promoted-slave", "slave 10.0.0.2:6380 10.0.0.2 6380 @ unicache 10.0.0.1 6379") == expected)
        #expect(try read("+switch-master", "unicache 10.0.0.1 6379 10.0.0.2 6380") == expected)
        #expect(try read("+switch-master", "other 10.0.0.1 6379 10.0.0.2 6380") == nil)
        #expect(try read("+sdown", "master unicache 10.0.0.1 6379") == nil)
        #expect(throws: RedisError.self) {
            try read("+promoted-slave", "slave 10.0.0.2:6380 10.0.0.2 6380 unicache 10.0.0.1 6379")
        }
        #expect(throws: RedisError.self) { try read("+switch-master", "unicache 10.0.0.1 6379 10.0.0.2 70000") }
    }

    /// The endpoint names the Sentinels only: a primary they name that cannot be reached is named in the failure (the
    /// log said "cannot connect to redis-sentinel://…: refused" without saying where). With the replica gone too, no
    /// failover replaces the dead primary meanwhile.
    @Test(.timeLimit(.minutes(2)))
    func aPrimaryThatCannotBeReachedIsNamed() async throws {
        try await withService(SentinelGroup.start()) { group in
            await group.replica.kill()
            await group.primary.kill()
            let endpoint = try RedisEndpoint(url: group.url)
            let sentinel = try #require(RedisSentinel(endpoint, timeout: .seconds(5)))
            let named = "its primary 127.0.0.1:\(group.primary.port), as the Sentinels name it"
            await #expect(throws: RedisError.connectFailed("\(named): refused (nothing accepts connections there)")) {
                _ = try await sentinel.connectToPrimary(endpoint)
            }
        }
    }

    @Test(.timeLimit(.minutes(2)))
    func discoveryFindsThePrimaryAndFollowsAFailover() async throws {
        try await withService(SentinelGroup.start()) { group in try await discoverAndFollow(group) }
    }

    private func discoverAndFollow(_ group: SentinelGroup) async throws {
        let (primary, replica, sentinels) = (group.primary, group.replica, group.sentinels)
        // The first address refuses connections: discovery goes on to the next and moves it to the front.
        let refused = try ReservedPort()
        defer { refused.release() }
        let addresses = [RedisEndpoint.Address(host: "127.0.0.1", port: refused.port)]
            + sentinels.map { RedisEndpoint.Address(host: "127.0.0.1", port: $0.port) }
        let named = RedisEndpoint(target: .sentinel(sentinels: addresses, masterName: "unicache", password: nil))
        let sentinel = try #require(RedisSentinel(named, timeout: .seconds(5)))

        #expect(try await sentinel.primaryAddress() == RedisEndpoint.Address(host: "127.0.0.1", port: primary.port))
        #expect(sentinel.order.first == addresses[1])
        let first = try await connect(primary)
        #expect(try await first.send(RedisCommand("SET", "unicache:before", "1")) == .status("OK"))
        await first.close()

        // A failover needs every Sentinel to know the replica and the other Sentinels, and the replica in sync.
        let ready = try await group.waitUntilReadyForFailover()
        #expect(ready, "the Sentinel group never saw the replica in sync")
        guard ready else { return }

        let watcher = try await sentinel.watch(clock: ContinuousClock())
        await primary.kill()
        var switches = watcher.switches.makeAsyncIterator()
        let announced = await switches.next()
        #expect(announced == RedisSentinelSwitch(
            masterName: "unicache", old: .init(host: "127.0.0.1", port: primary.port),
            new: .init(host: "127.0.0.1", port: replica.port)))
        await watcher.close()

        let promoted = try await sentinel.connectToPrimary(named)
        #expect(promoted.address == RedisEndpoint.Address(host: "127.0.0.1", port: replica.port))
        #expect(try await promoted.send(.get("unicache:before")) == .string(Array("1".utf8)))
        await promoted.close()
    }
}
