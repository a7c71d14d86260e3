import Logging
import NIOConcurrencyHelpers
import Redis
import RedisTestSupport
import TestSupport
import Testing

/// What a Sentinel says is input from a peer that does not authenticate itself: a watch that goes silent is noticed
/// and watched again with back-off, a host that is neither a name nor an address is refused and logged escaped, and
/// a burst of announcements makes one switch per interval, the latest.
@Suite("Sentinel watch: silence, forged hosts, bursts", .timeLimit(.minutes(2)))
struct RedisSentinelWatchTests {
    /// A fake Sentinel that answers the handshake's PING, confirms SUBSCRIBE and then, after `afterSubscribe` (its
    /// announcements), answers nothing more; `answersAtAll` false: a Sentinel that accepts and never answers.
    private func fakeSentinel(
        answersAtAll: Bool = true, afterSubscribe: @escaping @Sendable (FakeRedisPeer.Connection) -> Void = { _ in }
    ) async throws -> FakeRedisPeer {
        try await FakeRedisPeer { connection, command in
            guard answersAtAll else { return }
            switch command.first?.uppercased() {
            case "PING" where connection.received.count == 1: connection.send("+PONG\r\n")
            case "SUBSCRIBE":
                connection.send(FakeRedisPeer.subscribed(command))
                afterSubscribe(connection)
            case "SENTINEL":
                connection.send(FakeRedisPeer.array(["\u{1b}[31mevil host\u{07}", "6379"]))
            default: break  // silent: later PINGs are never answered
            }
        }
    }

    /// The group as `peer` answers for it. `timeout` bounds each connect and command: generous (a starved machine took
    /// a fake Sentinel's answer past 1 s), except where the handshake's timing out is what a test watches. A watch
    /// PINGs every `pingInterval` and ends after twice that unanswered (the fake never answers a PING): the default
    /// second, so that a loaded machine does not end a watch before it reads what the fake sent; 100 ms where the
    /// end is what a test watches.
    private func sentinel(
        _ peer: FakeRedisPeer, timeout: Duration = .seconds(5), pingInterval: Duration = .seconds(1),
        logger: Logger = Logger(label: "test")
    ) -> RedisSentinel {
        RedisSentinel(
            sentinels: [RedisEndpoint.Address(host: "127.0.0.1", port: peer.port)], masterName: "unicache", timeout: timeout,
            watchPingInterval: pingInterval, logger: logger)
    }

    /// `+switch-master` for the group, from 10.0.0.1:6379 to `host`:`port`, as a pub/sub message.
    private static func switchMaster(to host: String, port: Int) -> String {
        FakeRedisPeer.array(["message", "+switch-master", "unicache 10.0.0.1 6379 \(host) \(port)"])
    }

    @Test func aSentinelThatGoesSilentEndsTheWatch() async throws {
        try await withService(try await fakeSentinel()) { peer in
            let watcher = try await sentinel(peer, pingInterval: .milliseconds(100)).watch(clock: ContinuousClock())
            for await change in watcher.switches { Issue.record("no switch was announced: \(change)") }
            #expect(watcher.endReason == "no reply to PING within 200 ms")
        }
    }

    @Test func aLostWatchIsWatchedAgainWithBackOff() async throws {
        try await withService(try await fakeSentinel()) { silent in
            try await withService(try await fakeSentinel(answersAtAll: false)) { mute in
                // Silent after subscribing: each watch ends at the PINGs' deadline and a new one subscribes.
                let watchingSilent = Task {
                    await sentinel(silent, pingInterval: .milliseconds(100)).follow(clock: ContinuousClock()) { _ in }
                }
                await waitUntil("the silent Sentinel is watched again, twice") {
                    silent.connections.filter { $0.received.contains { $0.first == "SUBSCRIBE" } }.count >= 3
                }
                watchingSilent.cancel()
                await watchingSilent.value
                // Accepting and never answering: each handshake times out, and the next connect follows.
                let watchingMute = Task { await sentinel(mute, timeout: .seconds(1)).follow(clock: ContinuousClock()) { _ in } }
                await waitUntil("the mute Sentinel is tried again, twice") { mute.connections.count >= 3 }
                watchingMute.cancel()
                await watchingMute.value
                #expect(mute.connections.allSatisfy { $0.bytesWritten == 0 })
            }
        }
    }

    @Test func aHostThatIsNeitherANameNorAnAddressIsRefusedAndShownEscaped() async throws {
        let store = CapturingLogHandler.Store()
        let forged = "\u{1b}[2J\u{1b}[31mevil"
        try await withService(try await fakeSentinel { connection in
            connection.send(Self.switchMaster(to: forged, port: 6380) + Self.switchMaster(to: "redis-2.internal", port: 6380))
        }) { peer in
            let sentinel = sentinel(peer, logger: CapturingLogHandler.logger(store))
            // Its answer to SENTINEL get-master-addr-by-name names a host with escape codes and a space.
            let error = await #expect(throws: RedisError.self) { try await sentinel.primaryAddress() }
            let reason = String(describing: error)
            #expect(reason.contains(#"the host "\u{1B}[31mevil host\u{7}", which is neither a host name nor an IP address"#), "\(reason)")
            #expect(!reason.contains("\u{1b}") && !reason.contains("\u{07}"))

            // Its +switch-master naming a forged host is refused; the next one, naming a host, is followed.
            let handed = NIOLockedValueBox<[RedisSentinelSwitch]>([])
            let following = Task { await sentinel.follow(clock: ContinuousClock()) { change in handed.withLockedValue { $0.append(change) } } }
            await waitUntil("the valid switch is handed on") { !handed.withLockedValue { $0 }.isEmpty }
            following.cancel()
            await following.value
            #expect(handed.withLockedValue { $0 }.map(\.new) == [RedisEndpoint.Address(host: "redis-2.internal", port: 6380)])
            let lines = store.rendered
            #expect(lines.contains { $0.contains(#"\u{1B}[2J\u{1B}[31mevil"#) }, "\(lines)")
            #expect(!lines.contains { $0.contains("\u{1b}") })
        }
    }

    @Test func sixtySwitchesInABurstMakeTwoTheFirstAndTheLatest() async throws {
        let burst = (1...60).map { Self.switchMaster(to: "10.0.1.\($0)", port: 6379) }.joined()
        try await withService(try await fakeSentinel { $0.send(burst) }) { peer in
            let handed = NIOLockedValueBox<[RedisSentinelSwitch]>([])
            let sentinel = sentinel(peer)
            let following = Task { await sentinel.follow(clock: ContinuousClock()) { change in handed.withLockedValue { $0.append(change) } } }
            await waitUntil("the latest switch is handed on") {
                handed.withLockedValue { $0 }.last?.new.host == "10.0.1.60"
            }
            following.cancel()
            await following.value
            #expect(sentinel.minimumSwitchInterval == .seconds(1))
            #expect(handed.withLockedValue { $0 }.map(\.new.host) == ["10.0.1.1", "10.0.1.60"])
        }
    }

    @Test(arguments: [
        ("redis-1.internal", true), ("10.0.0.5", true), ("::1", true), ("fe80::1", true), ("redis_primary", true),
        ("localhost.", true), ("a b", false), ("\u{1b}[31m", false), ("", false), ("-bad.example", false),
        ("bad-.example", false), ("a..b", false), ("host\nname", false), ("ünïcode.example", false),
        (String(repeating: "a", count: 64) + ".example", false), ("999.1.1.1", false), ("1.2.3", false),
        ("10.0.0.5.", false), ("1.2.3.4.5", false), ("host.123", false), ("3com.example", true), ("[::1]", false),
    ])
    func theHostGrammar(host: String, valid: Bool) {
        #expect(RedisEndpoint.Address.isValidHost(host) == valid)
    }
}
