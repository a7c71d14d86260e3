import Foundation
import NIOConcurrencyHelpers
import NIOPosix
import Redis
import RedisTestSupport
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(10))) struct RedisNodeClientTests {
    @Test func binaryValuesRoundTrip() async throws {
        try await withRedisNode { server, node async throws in
            let key: [UInt8] = [0x6B, 0x00, 0xFF, 0x0D, 0x0A]
            let value: [UInt8] = [0x00, 0xFF, 0x00, 0x0D, 0x0A, 0x24] + (0...255).map { UInt8($0) }
            #expect(try await node.send(RedisCommand("SET", arguments: [key, value])) == .status("OK"))
            #expect(try await node.send(RedisCommand("GET", arguments: [key])) == .string(value))
            #expect(try await node.send(RedisCommand("STRLEN", arguments: [key])) == .integer(value.count))
            #expect(try await node.send(RedisCommand("SET", arguments: [Array("empty"), []])) == .status("OK"))
            #expect(try await node.send(RedisCommand("GET", "empty")) == .string([]))
        }
    }

    @Test func replyKindsMapAndAnErrorReplyKeepsTheContext() async throws {
        try await withRedisNode(size: 1) { server, node async throws in
            // One context: the error reply and the next command share it.
            #expect(try await node.send(RedisCommand("PING")) == .status("PONG"))
            #expect(try await node.send(RedisCommand("INCRBY", "n", "-7")) == .integer(-7))
            #expect(try await node.send(RedisCommand("GET", "missing")) == .null)
            #expect(try await node.send(RedisCommand("RPUSH", "list", "a", "b")) == .integer(2))
            #expect(try await node.send(RedisCommand("LRANGE", "list", "0", "-1")) == .array([.string(Array("a")), .string(Array("b"))]))
            #expect(try await node.send(RedisCommand("LRANGE", "nothing", "0", "-1")) == .array([]))
            #expect(
                try await node.send(RedisCommand("EVAL", "return {1, {'x', false}, redis.status_reply('fine')}", "0"))
                    == .array([.integer(1), .array([.string(Array("x")), .null]), .status("fine")]))
            let unknown = try await node.send(RedisCommand("NOSUCHCOMMAND", "arg"))
            guard case .error(let error) = unknown else {
                Issue.record("expected an error reply, got \(unknown)")
                return
            }
            #expect(error.message.hasPrefix("ERR unknown command"))
            let wrongType = try await node.send(RedisCommand("INCR", "list"))
            #expect(wrongType == .error(RedisErrorReply(message: "WRONGTYPE Operation against a key holding the wrong kind of value")))
            #expect(wrongType.errorSummary == "WRONGTYPE (the key holds another kind of value)")
            #expect(try await node.send(RedisCommand("PING")) == .status("PONG"))
            #expect(node.connectAttempts == 1)
            #expect(node.lastError == nil)
            #expect(node.isAvailable)
            #expect(RedisReply.status("OK").text == "OK")
            #expect(RedisReply.string([0x61]).bytes == [0x61])
            #expect(RedisReply.integer(1).text == nil)
        }
    }

    @Test func authenticatesWithThePassword() async throws {
        let password = "s3cret-Pw!"
        try await withRedisNode(password: password) { server, node async throws in
            #expect(try await node.send(RedisCommand("SET", "k", "v")) == .status("OK"))
            #expect(try await node.send(RedisCommand("GET", "k")) == .string(Array("v")))

            var wrong = server.endpoint
            wrong.password = "not-the-pw"
            let refused = RedisNodeClient(endpoint: wrong, timeout: .seconds(5), clock: ContinuousClock())
            defer { refused.shutdown() }
            let error = await #expect(throws: RedisError.self) { try await refused.send(RedisCommand("PING")) }
            let message = try #require(reason(error))
            #expect(message.contains("AUTH"))
            #expect(message.contains("WRONGPASS"))
            for text in [message, refused.lastError ?? "", "\(error.map { "\($0)" } ?? "")"] {
                #expect(!text.contains("not-the-pw"))
                #expect(!text.contains(password))
            }

            #expect(refused.connectFailures.authentication == 1)

            // Without a password the connection's first command (PING) is refused: a failed connect, counted as an
            // authentication refusal (CONTRACT §10.2), not a reply to the caller's command.
            var none = server.endpoint
            none.password = nil
            let anonymous = RedisNodeClient(endpoint: none, timeout: .seconds(5), clock: ContinuousClock())
            defer { anonymous.shutdown() }
            let noAuth = await #expect(throws: RedisError.self) { try await anonymous.send(RedisCommand("GET", "k")) }
            #expect(reason(noAuth)?.contains("NOAUTH") == true, "\(String(describing: noAuth))")
            #expect(anonymous.connectFailures.authentication == 1)
        }
    }

    @Test func selectsTheDatabase() async throws {
        try await withRedisServer { (server: RedisServerProcess) async throws in
            let db1 = RedisNodeClient(
                endpoint: try RedisEndpoint(url: "redis://127.0.0.1:\(server.port)/1"), timeout: .seconds(5), clock: ContinuousClock())
            let db0 = RedisNodeClient(endpoint: server.endpoint, timeout: .seconds(5), clock: ContinuousClock())
            defer {
                db1.shutdown()
                db0.shutdown()
            }
            #expect(try await db1.send(RedisCommand("SET", "only-in-1", "yes")) == .status("OK"))
            #expect(try await db0.send(RedisCommand("GET", "only-in-1")) == .null)
            #expect(try await db1.send(RedisCommand("GET", "only-in-1")) == .string(Array("yes")))
            #expect(try await db1.send(RedisCommand("DBSIZE")) == .integer(1))
            #expect(try await db0.send(RedisCommand("DBSIZE")) == .integer(0))

            var outOfRange = server.endpoint
            outOfRange.database = 99
            let bad = RedisNodeClient(endpoint: outOfRange, timeout: .seconds(5), clock: ContinuousClock())
            defer { bad.shutdown() }
            let error = await #expect(throws: RedisError.self) { try await bad.send(RedisCommand("PING")) }
            #expect(reason(error)?.contains("SELECT 99") == true)
        }
    }

    @Test func pipelineRepliesComeInOrder() async throws {
        try await withRedisNode { server, node async throws in
            let commands: [[String]] = [
                ["SET", "p", "1"], ["INCR", "p"], ["GET", "p"], ["BOGUS"], ["GET", "none"], ["INCRBY", "p", "40"],
            ]
            let replies = try await node.send(commands.map { RedisCommand($0[0], arguments: $0.dropFirst().map { Array($0.utf8) }) })
            #expect(replies.count == 6)
            #expect(replies[0] == .status("OK"))
            #expect(replies[1] == .integer(2))
            #expect(replies[2] == .string(Array("2")))
            if case .error(let error) = replies[3] {
                #expect(error.message.hasPrefix("ERR unknown command"))
            } else {
                Issue.record("expected an error reply, got \(replies[3])")
            }
            #expect(replies[4] == .null)
            #expect(replies[5] == .integer(42))
            #expect(try await node.send([RedisCommand]()) == [])
            let many = try await node.send((1...100).map { _ in RedisCommand("INCR", "seq") })
            #expect(many == (1...100).map { .integer($0) })
        }
    }

    @Test func concurrentCommandsAllCount() async throws {
        try await withRedisNode(timeout: .seconds(10)) { server, node async throws in
            let failures = await withTaskGroup(of: Int.self) { group in
                for _ in 0..<200 {
                    group.addTask {
                        var failures = 0
                        for _ in 0..<20 {
                            do {
                                guard case .integer = try await node.send(RedisCommand("INCR", "counter")) else {
                                    failures += 1
                                    continue
                                }
                            } catch {
                                failures += 1
                            }
                        }
                        return failures
                    }
                }
                return await group.reduce(0, +)
            }
            #expect(failures == 0)
            #expect(try await node.send(RedisCommand("GET", "counter")) == .string(Array("4000")))
            #expect((1...4).contains(node.connectAttempts))
            #expect(node.isAvailable)
        }
    }

    /// One worker sends the jobs waiting for it as one pipeline: each caller still gets its own replies, in order,
    /// a pipeline's as a whole, an error reply only where its command failed.
    @Test func jobsSentTogetherGetTheirOwnReplies() async throws {
        try await withRedisNode(timeout: .seconds(10), size: 1) { server, node async throws in
            let wrong = await withTaskGroup(of: Int.self) { group in
                for caller in 0..<300 {
                    group.addTask {
                        do {
                            switch caller % 3 {
                            case 0:
                                return try await node.send(RedisCommand("ECHO", "caller \(caller)")) == .string(Array("caller \(caller)".utf8)) ? 0 : 1
                            case 1:
                                let replies = try await node.send([
                                    RedisCommand("SET", "k\(caller)", "v\(caller)"), RedisCommand("BOGUS"), .get("k\(caller)"),
                                ])
                                guard replies.count == 3, replies[0] == .status("OK"), case .error = replies[1],
                                    replies[2] == .string(Array("v\(caller)".utf8))
                                else { return 1 }
                                return 0
                            default:
                                return try await node.send(RedisCommand("INCR", "n")) != .null ? 0 : 1
                            }
                        } catch {
                            return 1
                        }
                    }
                }
                return await group.reduce(0, +)
            }
            #expect(wrong == 0)
            #expect(try await node.send(RedisCommand("GET", "n")) == .string(Array("100".utf8)))
            #expect(node.connectAttempts == 1)
        }
    }

    /// Commands go to the first connection with the fewest in flight: one after another they all share the first
    /// connection; while a command blocks it (BLPOP), the next goes to a second one and is answered at once.
    @Test func commandsShareOneConnectionUntilItIsBusy() async throws {
        try await withRedisNode(timeout: .seconds(30)) { server, node async throws in
            for _ in 0..<20 { #expect(try await node.send(RedisCommand("PING")) == .status("PONG")) }
            #expect(node.connectAttempts == 1)
            let blocked = Task { try await node.send(RedisCommand("BLPOP", "never-pushed", "0")) }
            // Until the BLPOP is in flight on the first connection, a PING could still take it: wait for Redis to
            // report one blocked client. Asked on a connection of its own: sent through `node` while the BLPOP still
            // waited in the first connection's outbox, the question would join it there and wait behind it.
            await waitUntil("the BLPOP blocks") {
                guard case .string(let info)? = try? await redisCommand(server, "INFO", "clients") else { return false }
                return String(decoding: info, as: UTF8.self).contains("blocked_clients:1")
            }
            #expect(try await node.send(RedisCommand("PING")) == .status("PONG"))
            #expect(node.connectAttempts == 2)
            #expect(try await node.send(RedisCommand("RPUSH", "never-pushed", "x")) == .integer(1))
            #expect(try await blocked.value == .array([.string(Array("never-pushed")), .string(Array("x"))]))
        }
    }

    /// A node of four connections on a loop of its own, its first connection made, then its loop held (a task
    /// waits on it) while `body` sends commands: they wait in an outbox until `body` calls `release`.
    private func withHeldLoop(_ body: (_ node: RedisNodeClient, _ release: () -> Void) async throws -> Void) async throws {
        try await withRedisServer { (server: RedisServerProcess) async throws in
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            defer { group.shutdownGracefully { _ in } }
            let node = RedisNodeClient(endpoint: server.endpoint, timeout: .seconds(30), clock: ContinuousClock(), size: 4, eventLoopGroup: group)
            defer { node.shutdown() }
            #expect(try await node.send(RedisCommand("PING")) == .status("PONG"))
            let held = Latch()
            group.next().execute { held.blockingWait() }
            defer { held.open() }  // a second open is harmless; a missing one would hold the loop for good
            try await body(node) { held.open() }
        }
    }

    /// The commands sent while the loop is held wait in the first connection's outbox, each with one more in flight
    /// there than on the idle connections, and all join it (fewest-in-flight alone would spread them over the four,
    /// one connect each); written together, each still gets its own reply.
    @Test func commandsSentWhileTheLoopIsBusyShareOneWrite() async throws {
        try await withHeldLoop { (node: RedisNodeClient, release: () -> Void) async throws in
            let replies = NIOLockedValueBox<[Int: Result<RedisReply, RedisError>]>([:])
            let answered = Latch()
            for index in 0..<8 {
                node.send(RedisCommand("ECHO", "m\(index)")) { reply in
                    if replies.withLockedValue({ $0[index] = reply; return $0.count }) == 8 { answered.open() }
                }
            }
            release()
            await answered.wait()
            let got = replies.withLockedValue { $0 }
            #expect((0..<8).allSatisfy { index in (try? got[index]?.get()) == .string(Array("m\(index)".utf8)) })
            #expect(node.connectAttempts == 1)
        }
    }

    /// A reply to a callback is given on the node's loop: there, the dedicated loop's thread reports SCHED_BATCH (3).
    @Test func theDedicatedLoopRunsAsABatchThread() async throws {
        try await withRedisServer { (server: RedisServerProcess) async throws in
            let node = RedisNodeClient(endpoint: server.endpoint, timeout: .seconds(30), clock: ContinuousClock(), dedicatedEventLoop: true)
            defer { node.shutdown() }
            let policy = NIOLockedValueBox<Int32?>(nil)
            let answered = Latch()
            node.send(.ping) { _ in
                policy.withLockedValue { $0 = sched_getscheduler(0) }
                answered.open()
            }
            await answered.wait()
            let batch: Int32 = 3
            #expect(policy.withLockedValue { $0 } == batch)
        }
    }

    /// The commands the service sends, typed, do what their names say against a real server.
    @Test func theServiceCommandsDoWhatTheySay() async throws {
        try await withRedisNode(size: 1) { server, node async throws in
            #expect(try await node.send(.setIfAbsent("lock", "a", expiringAfter: 60_000)) == .status("OK"))
            #expect(try await node.send(.setIfAbsent("lock", "b", expiringAfter: 60_000)) == .null)
            #expect(try await node.send(.get("lock")) == .string(Array("a")))
            #expect(try await node.send(RedisCommand("PTTL", "lock")).int.map { (1...60_000).contains($0) } == true)
            #expect(try await node.send(.del(["lock", "absent"])) == .integer(1))
            for id in 1...3 {
                _ = try await node.send(RedisCommand("XADD", "log", "\(id)-0", "m", "change \(id)"))
            }
            let range = try await node.send(.xrange("log", from: "2", to: "+", count: 5))
            #expect(range.array?.compactMap { $0.array?.first?.text } == ["2-0", "3-0"])
            _ = try await node.send(RedisCommand("SET", "entry:1", "x"))
            let scanned = try await node.send(.scan(cursor: "0", match: "entry:*", count: 1000))
            #expect(scanned.array?.last?.array == [.string(Array("entry:1"))])
            #expect(try await node.send(.ping) == .status("PONG"))
            #expect(try await node.send(.role).array?.first?.text == "master")
        }
    }

    /// A script goes by its digest; once Redis has forgotten it (`SCRIPT FLUSH`, a restart), `NOSCRIPT` is answered
    /// by sending its text once, which Redis caches again.
    @Test func aScriptRedisForgotIsSentOnceWithItsText() async throws {
        try await withRedisNode(size: 1) { server, node async throws in
            let script = RedisScript("return {KEYS[1], ARGV[1]}")
            let expected = RedisReply.array([.string(Array("k")), .string(Array("v"))])
            #expect(try await node.evaluate(script, keys: [Array("k")], arguments: [Array("v")]) == expected)
            #expect(try await node.send(RedisCommand("SCRIPT", "FLUSH")) == .status("OK"))
            #expect(try await node.evaluate(script, keys: [Array("k")], arguments: [Array("v")]) == expected)
            #expect(try await node.send(.evalSHA(script.sha1, keys: [Array("k")], arguments: [Array("v")])) == expected)
        }
    }

    @Test func shutdownIsFinalAndIdempotent() async throws {
        try await withRedisServer { (server: RedisServerProcess) async throws in
            let node = RedisNodeClient(endpoint: server.endpoint, timeout: .seconds(5), clock: ContinuousClock())
            #expect(try await node.send(RedisCommand("PING")) == .status("PONG"))
            node.shutdown()
            node.shutdown()
            #expect(!node.isAvailable)
            let error = await #expect(throws: RedisError.self) { try await node.send(RedisCommand("PING")) }
            #expect(reason(error)?.contains("shut down") == true)
        }
    }

    @Test func aNodeClientThatIsNeverUsedStartsNothing() {
        let node = RedisNodeClient(
            endpoint: RedisEndpoint(host: "127.0.0.1", port: 1), timeout: .seconds(1), clock: ContinuousClock())
        #expect(node.isAvailable)
        #expect(node.lastError == nil)
        #expect(node.connectAttempts == 0)
        node.shutdown()
    }
}
