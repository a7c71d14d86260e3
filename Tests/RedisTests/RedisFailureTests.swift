import Breaker
import Redis
import RedisTestSupport
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(10))) struct RedisFailureTests {
    /// A loopback port nothing listens on, held for the rest of the process (a port freed by stopping a server
    /// may be given to a server another test starts).
    func closedPort() async throws -> Int {
        try ReservedPort().port
    }

    @Test func deadRedisFailsFastAndTheBreakerStopsConnecting() async throws {
        let port = try await closedPort()
        let endpoint = RedisEndpoint(host: "127.0.0.1", port: port, password: "dead-pw")
        // The breaker's time is the clock given: no probe runs until the test moves it, so every connect is counted.
        // A refused connect fails at once; the timeout is long so that a loaded machine cannot turn the refusal into
        // a timeout.
        let clock = ManualClock()
        let node = RedisNodeClient(
            endpoint: endpoint, timeout: .seconds(5), clock: clock,
            breaker: .init(threshold: 3, initialBackoff: .seconds(600), maximumBackoff: .seconds(600)))
        defer { node.shutdown() }
        // No wall-clock bounds here: under ThreadSanitizer, with redis-servers being spawned beside it, a task's
        // resumption alone once took 9 s. "Fast" is what the breaker's counts show; bench-shared measures the time.
        let error = await #expect(throws: RedisError.self) { try await node.send(RedisCommand("PING")) }
        #expect(reason(error)?.contains("refused (nothing accepts connections there)") == true, "\(String(describing: error))")
        #expect(node.isAvailable)
        for _ in 0..<2 {
            await #expect(throws: RedisError.self) { try await node.send(RedisCommand("PING")) }
        }
        #expect(node.connectAttempts == 3)
        #expect(!node.isAvailable)
        guard case .open = node.breakerState else {
            Issue.record("breaker not open: \(node.breakerState)")
            return
        }

        for _ in 0..<200 {
            let error = await #expect(throws: RedisError.self) { try await node.send(RedisCommand("PING")) }
            #expect(reason(error)?.contains("circuit breaker open") == true)
        }
        #expect(node.connectAttempts == 3)
        // The back-off passed on the node client's clock: the next command is the one probe, and connects.
        clock.advance(by: .seconds(600))
        await #expect(throws: RedisError.self) { try await node.send(RedisCommand("PING")) }
        #expect(node.connectAttempts == 4)
        let lastError = try #require(node.lastError)
        #expect(lastError.contains("refused (nothing accepts connections there)"))
        #expect(lastError.contains("redis://:***@127.0.0.1"))
        #expect(!lastError.contains("dead-pw"))
    }

    /// A refused connection says so in plain words, with brackets that balance, in one warning per back-off: not one
    /// per command (CONTRACT's new user once read "Connection refused) (errno: 111)))" on every request).
    @Test func aRefusedConnectionIsLoggedOnceInPlainWords() async throws {
        let port = try await closedPort()
        let store = CapturingLogHandler.Store()
        let node = RedisNodeClient(
            endpoint: RedisEndpoint(host: "127.0.0.1", port: port, user: "app", password: "dead-pw"), timeout: .seconds(5), clock: ContinuousClock(),
            breaker: .init(threshold: 3, initialBackoff: .seconds(600), maximumBackoff: .seconds(600)),
            logger: CapturingLogHandler.logger(store))
        defer { node.shutdown() }
        var last: RedisError?
        for _ in 0..<50 {
            do { _ = try await node.send(RedisCommand("PING")) } catch { last = error }
        }
        let lines = store.rendered.filter { $0.contains("Redis connect failed") }
        #expect(lines == [
            "Redis connect failed reason=cannot connect to redis://app:***@127.0.0.1:\(port)/0: refused (nothing accepts connections there)"
        ])
        // What a fleet write's 503 problem says while the breaker is open.
        let rejection = try #require(last).reason
        #expect(rejection.hasPrefix("circuit breaker open after: cannot connect to redis://app:***@127.0.0.1"), "\(rejection)")
        for text in lines + [rejection] {
            #expect(text.filter { $0 == "(" }.count == text.filter { $0 == ")" }.count, "\(text)")
        }
    }

    /// Several slots connecting when the breaker opens fail one after the other: the first failure is logged, the
    /// others are not (the breaker already opened), and the probe's after the back-off is: one warning per back-off, not
    /// one per slot (a stalled Redis, whose connects all wait for their timeout, logged each slot's).
    @Test func connectsUnderWayWhenTheBreakerOpensAreNotLoggedEach() async throws {
        // A peer that accepts connections and never answers their handshake: the test ends each connect by closing it.
        let peer = try await FakeRedisPeer { _, _ in }
        try await withService(peer) { peer in
            let store = CapturingLogHandler.Store()
            let clock = ManualClock()
            let node = RedisNodeClient(
                endpoint: RedisEndpoint(host: "127.0.0.1", port: peer.port), timeout: .seconds(30), clock: clock, size: 4,
                breaker: .init(threshold: 1, initialBackoff: .seconds(600), maximumBackoff: .seconds(600)),
                logger: CapturingLogHandler.logger(store))
            defer { node.shutdown() }
            let warnings = { store.rendered.filter { $0.contains("Redis connect failed") } }
            func handshakes(_ count: Int) async {
                await waitUntil("\(count) connections with their handshake") {
                    let connections = peer.connections
                    return connections.count == count && connections.allSatisfy { !$0.received.isEmpty }
                }
            }
            let failures = await withTaskGroup(of: Bool.self) { group in
                for _ in 0..<8 {
                    group.addTask { (try? await node.send(RedisCommand("PING"))) == nil }
                }
                // Each of the four slots connects (a command goes to the slot with the fewest in flight).
                await handshakes(4)
                peer.connections[0].close()
                await waitUntil("the breaker opens") { node.breakerState == .open }
                for connection in peer.connections.dropFirst() { connection.close() }
                return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
            }
            #expect(failures == 8)
            #expect(node.connectAttempts == 4)
            #expect(warnings().count == 1, "\(warnings())")

            // The back-off passed: the probe connects, fails, and is logged.
            clock.advance(by: .seconds(600))
            async let probe = try? node.send(RedisCommand("PING"))
            await handshakes(5)
            peer.connections[4].close()
            #expect(await probe == nil)
            #expect(warnings().count == 2, "\(warnings())")
        }
    }

    @Test func concurrentCommandsToADeadRedisDoNotAllConnect() async throws {
        let port = try await closedPort()
        let node = RedisNodeClient(
            endpoint: RedisEndpoint(host: "127.0.0.1", port: port), timeout: .seconds(2), clock: ContinuousClock(), size: 2,
            breaker: .init(threshold: 3, initialBackoff: .seconds(600), maximumBackoff: .seconds(600)))
        defer { node.shutdown() }
        let failures = await withTaskGroup(of: Bool.self) { group in
            for _ in 0..<100 {
                group.addTask {
                    do {
                        _ = try await node.send(RedisCommand("PING"))
                        return false
                    } catch {
                        return true
                    }
                }
            }
            return await group.reduce(0) { $0 + ($1 ? 1 : 0) }
        }
        #expect(failures == 100)
        // Queued commands re-check the breaker when a worker takes them: once it opened, they fail
        // without a connect (each of the 2 workers may have been connecting when it opened).
        #expect(node.connectAttempts <= 3 + 2)
        #expect(!node.isAvailable)
    }

    @Test func aCommandTimeoutDiscardsTheContextAndTheNextCommandReconnects() async throws {
        try await withRedisServer { (server: RedisServerProcess) async throws in
            // 2 s, not the default 50 ms: the PINGs around the timed-out command must not time out themselves on a
            // starved machine (the whole suite in parallel on 2 cores, other builds beside it, took a PING past 500 ms).
            let node = RedisNodeClient(endpoint: server.endpoint, timeout: .seconds(2), clock: ContinuousClock(), size: 1)
            let patient = RedisNodeClient(endpoint: server.endpoint, timeout: .seconds(30), clock: ContinuousClock(), size: 1)
            defer {
                node.shutdown()
                patient.shutdown()
            }
            #expect(try await node.send(RedisCommand("PING")) == .status("PONG"))
            #expect(node.connectAttempts == 1)

            let clock = ContinuousClock()
            let started = clock.now
            let error = await #expect(throws: RedisError.self) { try await node.send(RedisCommand("DEBUG", "SLEEP", "10")) }
            let elapsed = started.duration(to: clock.now)
            #expect(reason(error)?.contains("timed out after 2 s") == true, "\(String(describing: error))")
            #expect(elapsed < .seconds(8))  // not the 10 s Redis sleeps
            #expect(node.lastError?.contains("timed out") == true)

            // The patient node's PING is answered once Redis woke up.
            #expect(try await patient.send(RedisCommand("PING")) == .status("PONG"))
            #expect(try await node.send(RedisCommand("PING")) == .status("PONG"))
            #expect(node.connectAttempts == 2)
            #expect(node.lastError == nil)
            #expect(node.isAvailable)
        }
    }

    @Test func killAndRestartRecoverWithoutANewPool() async throws {
        try await withRedisNode(timeout: .seconds(1), size: 2) { server, node async throws in
            #expect(try await node.send(RedisCommand("SET", "before", "1")) == .status("OK"))

            await server.kill()
            let error = await #expect(throws: RedisError.self) { try await node.send(RedisCommand("GET", "before")) }
            #expect(error != nil)
            // Failures until the breaker opens (connection refused is immediate).
            var attempts = 0
            while node.isAvailable && attempts < 20 {
                attempts += 1
                _ = try? await node.send(RedisCommand("PING"))
            }
            #expect(!node.isAvailable)
            #expect(node.lastError != nil)

            try await server.restart()
            // The breaker lets a probe through once its back-off (100 ms, then doubling) passed:
            // retry until it does, bounded (the back-off is inherent, this is not a synchronisation).
            var reply: RedisReply?
            _ = await poll(within: .seconds(15)) {
                reply = try? await node.send(RedisCommand("PING"))
                return reply != nil
            }
            #expect(reply == .status("PONG"))
            #expect(node.isAvailable)
            #expect(node.lastError == nil)
            // A fresh server: the old key is gone, new ones work on every context.
            #expect(try await node.send([.get("before")]) == [.null])
            for count in 1...10 {
                #expect(try await node.send(RedisCommand("INCR", "after")) == .integer(count))
            }
            #expect(try await node.send(RedisCommand("GET", "after")) == .string(Array("10")))
        }
    }

    @Test func aSuspendedServerTimesOutInsteadOfHanging() async throws {
        try await withRedisNode(timeout: .seconds(2), size: 1) { server, node async throws in
            // 2 s: the PING before the suspension must not time out on a starved machine (one took 500 ms).
            #expect(try await node.send(RedisCommand("PING")) == .status("PONG"))
            server.suspend()
            let clock = ContinuousClock()
            let elapsed = await clock.measure {
                let error = await #expect(throws: RedisError.self) { try await node.send(RedisCommand("PING")) }
                #expect(reason(error)?.contains("timed out") == true)
            }
            server.resume()
            #expect(elapsed < .seconds(20))  // it timed out: without a timeout it would wait for resume()
        }
    }
}
