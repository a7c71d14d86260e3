import ClocksTesting
import NIOConcurrencyHelpers
import Redis
import RedisTestSupport
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(10))) struct RedisSubscriberTests {
    typealias Event = RedisSubscriber.Event

    /// A subscriber whose events land in a queue the test awaits with a bound.
    func makeSubscriber(
        _ endpoint: RedisEndpoint, channel: String = "invalidations", timeout: Duration = .seconds(2),
        pingInterval: Duration = .seconds(1), clock: any Clock<Duration> = ContinuousClock()
    ) -> (RedisSubscriber, AsyncEventQueue<Event>) {
        let events = AsyncEventQueue<Event>()
        let subscriber = RedisSubscriber(
            endpoint: endpoint, channel: channel, timeout: timeout, clock: clock, pingInterval: pingInterval
        ) { event in
            events.push(event)
        }
        return (subscriber, events)
    }

    /// Whether the subscriber subscribes (bounded). A failed attempt may come first: on a starved machine a short
    /// `timeout` can pass before the first SUBSCRIBE is confirmed; the subscriber reports it and tries again, and what
    /// a test checks next (a lost connection noticed, messages) starts from the subscription, not from the attempt.
    func subscribed(_ events: AsyncEventQueue<Event>) async -> Bool {
        await events.first(within: .seconds(20)) { $0 == .subscribed } != nil
    }

    /// Kills the server, expects the subscriber to report the loss, and starts the server again.
    func killAndRestart(
        _ server: RedisServerProcess, _ subscriber: RedisSubscriber, _ events: AsyncEventQueue<Event>
    ) async throws {
        await server.kill()
        let lost = await events.next()
        #expect(lost.map(isDisconnected) == true, "\(String(describing: lost))")
        #expect(!subscriber.isConnected)
        try await server.restart()
    }

    func isDisconnected(_ event: Event) -> Bool {
        if case .disconnected = event { return true }
        return false
    }

    @Test func deliversBinaryMessagesInOrderAndNothingAfterStop() async throws {
        try await withRedisNode { server, node async throws in
            let (subscriber, events) = makeSubscriber(server.endpoint)
            subscriber.start()
            subscriber.start()
            #expect(await subscribed(events))
            #expect(subscriber.isConnected)

            let payloads: [[UInt8]] = [[0x00, 0xFF, 0x0D, 0x0A], Array("second"), [], (0...255).map { UInt8($0) }]
            for payload in payloads {
                // One receiver: the subscription is confirmed, so Redis counts it.
                #expect(try await node.send(RedisCommand("PUBLISH", arguments: [Array("invalidations"), payload])) == .integer(1))
            }
            #expect(try await node.send(RedisCommand("PUBLISH", "another-channel", "x")) == .integer(0))
            for payload in payloads {
                #expect(await events.next() == .message(payload))
            }

            let elapsed = ContinuousClock().measure { subscriber.stop() }
            #expect(elapsed < .seconds(5))
            subscriber.stop()
            #expect(!subscriber.isConnected)
            // Published after stop() returned (the reply proves Redis handled it): never delivered.
            _ = try await node.send(RedisCommand("PUBLISH", "invalidations", "late"))
            _ = try await node.send(RedisCommand("PING"))
            #expect(events.pending.isEmpty)
        }
    }

    @Test func authenticatesAndReportsAWrongPasswordWithoutShowingIt() async throws {
        try await withRedisNode(password: "sub-Secret") { server, node async throws in
            let (subscriber, events) = makeSubscriber(server.endpoint, channel: "c")
            defer { subscriber.stop() }
            subscriber.start()
            #expect(await subscribed(events))
            #expect(try await node.send(RedisCommand("PUBLISH", "c", "hello")) == .integer(1))
            #expect(await events.next() == .message(Array("hello")))

            var wrong = server.endpoint
            wrong.password = "wrong-Secret"
            let (refused, refusedEvents) = makeSubscriber(wrong, channel: "c")
            defer { refused.stop() }
            refused.start()
            guard let reason = await disconnectReason(refusedEvents) else { return }
            #expect(reason.contains("WRONGPASS"))
            #expect(!reason.contains("wrong-Secret"))
            #expect(!reason.contains("sub-Secret"))
            #expect(!refused.isConnected)
        }
    }

    @Test func reconnectsByItselfAfterTheServerWasKilledAndRestarted() async throws {
        try await withRedisNode(timeout: .seconds(2)) { server, node async throws in
            let (subscriber, events) = makeSubscriber(server.endpoint)
            defer { subscriber.stop() }
            subscriber.start()
            #expect(await subscribed(events))

            try await killAndRestart(server, subscriber, events)
            // Only failed reconnects may come between (not reported again): the next event is .subscribed.
            #expect(await events.next(within: .seconds(20)) == .subscribed)
            #expect(subscriber.isConnected)
            // The node reconnects too (retrying until its breaker lets a probe through).
            var published: RedisReply?
            _ = await poll(within: .seconds(15)) {
                published = try? await node.send(RedisCommand("PUBLISH", "invalidations", "again"))
                return published != nil
            }
            #expect(published == .integer(1))
            #expect(await events.next() == .message(Array("again")))
        }
    }

    /// A back-off grown to seconds (a cluster's primary dead until its replica was promoted) kept the channel deaf
    /// after the node answered again, while other instances' writes went on: `retryNow()` ends it at once. The
    /// back-off's clock never moves here, so only `retryNow()` can bring the subscription back.
    @Test func retryNowEndsTheBackOffAtOnce() async throws {
        try await withRedisNode(timeout: .seconds(2)) { server, _ async throws in
            let clock = ManualClock()
            let (subscriber, events) = makeSubscriber(server.endpoint, clock: clock)
            defer { subscriber.stop() }
            subscriber.start()
            #expect(await subscribed(events))

            try await killAndRestart(server, subscriber, events)
            subscriber.retryNow()
            #expect(await events.next(within: .seconds(20)) == .subscribed)
            #expect(subscriber.isConnected)
        }
    }

    @Test func anIdleHealthyConnectionStaysUpThanksToPings() async throws {
        try await withRedisNode { server, node async throws in
            // 1 s: a loaded 2-core machine (ThreadSanitizer, the whole suite and other builds beside it) held a PING's
            // reply past 600 ms (twice an interval of 300 ms, once the interval here), so the silence allowed is 2 s.
            let (subscriber, events) = makeSubscriber(server.endpoint, pingInterval: .seconds(1))
            defer { subscriber.stop() }
            subscriber.start()
            #expect(await subscribed(events))
            // Three and a half ping intervals of idleness: unanswered pings would have meant .disconnected after three.
            let event = await events.next(within: .milliseconds(3500))
            #expect(event == nil, "\(String(describing: event))")
            #expect(subscriber.isConnected)
            let clients = try await node.send(RedisCommand("CLIENT", "LIST")).text ?? ""
            let subscriberLine = clients.split(separator: "\n").first { $0.contains(" sub=1 ") }
            #expect(subscriberLine?.contains(" cmd=ping ") == true, "\(clients)")
            #expect(try await node.send(RedisCommand("PUBLISH", "invalidations", "still-here")) == .integer(1))
            #expect(await events.next() == .message(Array("still-here")))
        }
    }

    /// A subscription made on another node than the endpoint's (a cluster's shard owner, where the endpoint names a
    /// seed; Sentinel's primary): its loss names that node. It used to name the endpoint's own address, so a dead
    /// cluster primary was reported as the seed's connection lost.
    @Test func aLostSubscriptionNamesTheNodeItWasOn() async throws {
        try await withRedisNode { server, node async throws in
            let seed = try RedisEndpoint(url: "redis://127.0.0.1:1")
            let events = AsyncEventQueue<Event>()
            let subscriber = RedisSubscriber(
                endpoint: seed, channel: "invalidations", timeout: .seconds(2), clock: ContinuousClock(),
                subscribe: { () async throws(RedisError) -> RedisSubscription in
                    let subscription = try await RedisSubscription.connect(server.endpoint, connectTimeout: .seconds(2))
                    try await subscription.subscribe(["invalidations"])
                    return subscription
                }
            ) { events.push($0) }
            defer { subscriber.stop() }
            subscriber.start()
            #expect(await subscribed(events))
            _ = try await node.send(RedisCommand("CLIENT", "KILL", "TYPE", "pubsub"))
            let reason = await disconnectReason(events) ?? ""
            #expect(reason.contains("127.0.0.1:\(server.port)") && !reason.contains("127.0.0.1:1/"), "\(reason)")
        }
    }

    @Test func aPausedServerIsDetectedByPingsAndTheSubscriptionComesBack() async throws {
        try await withRedisNode { server, node async throws in
            // The subscriber's defaults (2 s, a ping a second): its SUBSCRIBE and pings before the pause must not time
            // out on a loaded machine.
            let (subscriber, events) = makeSubscriber(server.endpoint)
            defer { subscriber.stop() }
            subscriber.start()
            #expect(await subscribed(events))

            let clock = ContinuousClock()
            let paused = clock.now
            #expect(try await node.send(RedisCommand("CLIENT", "PAUSE", "15000")) == .status("OK"))
            // Silence for three ping intervals (3 s) counts as lost, well before the pause ends.
            let lost = await events.next(within: .seconds(12))
            #expect(lost.map(isDisconnected) == true, "\(String(describing: lost))")
            if case .disconnected(let reason)? = lost {
                #expect(reason.contains("PING"), "\(reason)")
            }
            #expect(paused.duration(to: clock.now) < .seconds(12))
            // Once the pause is over it subscribes again by itself.
            #expect(await events.next(within: .seconds(30)) == .subscribed)
            // At least one receiver: an attempt that timed out during the pause and closed its connection may still
            // be counted at the moment the pause ends (Redis runs the SUBSCRIBE it held before it reads the close), as
            // a full suite on two cores showed once (23 s in). The message arriving is what shows the subscription back.
            let receivers = try await node.send(RedisCommand("PUBLISH", "invalidations", "resumed"))
            #expect(receivers.int.map { $0 >= 1 } == true, "\(receivers)")
            #expect(await events.next() == .message(Array("resumed")))
        }
    }

    @Test func aStoppedServerProcessIsDetectedAndReconnectsTimeOut() async throws {
        try await withRedisServer { (server: RedisServerProcess) async throws in
            // The defaults (2 s, a ping a second): the first SUBSCRIBE must not time out on a loaded machine.
            let (subscriber, events) = makeSubscriber(server.endpoint)
            defer { subscriber.stop() }
            subscriber.start()
            #expect(await subscribed(events))

            // SIGSTOP: the kernel still accepts connections, so reconnects reach SUBSCRIBE and time out.
            server.suspend()
            let lost = await events.next()
            #expect(lost.map(isDisconnected) == true, "\(String(describing: lost))")
            server.resume()
            #expect(await events.next(within: .seconds(20)) == .subscribed)
            #expect(subscriber.isConnected)
        }
    }

    @Test func aDeadServerIsReportedOnceAndStopIsPrompt() async throws {
        // A port held bound without listening: refused, and no server another test starts can be given it.
        let reserved = try ReservedPort()
        defer { reserved.release() }
        let (subscriber, events) = makeSubscriber(
            RedisEndpoint(host: "127.0.0.1", port: reserved.port))
        subscriber.start()
        guard let reason = await disconnectReason(events) else {
            subscriber.stop()
            return
        }
        #expect(reason.contains("refused (nothing accepts connections there)"), "\(reason)")
        #expect(!subscriber.isConnected)
        let elapsed = ContinuousClock().measure { subscriber.stop() }
        #expect(elapsed < .seconds(5))
        // Failed reconnects are not reported again.
        #expect(events.pending.allSatisfy { !isDisconnected($0) })
    }

    @Test func stopFromTheEventHandlerDoesNotDeadlock() async throws {
        try await withRedisServer { (server: RedisServerProcess) async throws in
            let events = AsyncEventQueue<Event>()
            let holder = NIOLockedValueBox<RedisSubscriber?>(nil)
            let subscriber = RedisSubscriber(endpoint: server.endpoint, channel: "c", timeout: .seconds(2), clock: ContinuousClock()) { event in
                events.push(event)
                if event == .subscribed { holder.withLockedValue { $0 }?.stop() }
            }
            holder.withLockedValue { $0 = subscriber }
            subscriber.start()
            #expect(await subscribed(events))
            subscriber.stop()
            holder.withLockedValue { $0 = nil }
            #expect(!subscriber.isConnected)
        }
    }
}
