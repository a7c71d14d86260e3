import Foundation
import NIOConcurrencyHelpers
import NIOPosix
import Redis
import RedisTestSupport
import TestSupport
import Testing

@Suite(.timeLimit(.minutes(10))) struct RedisCommandPoolTests {
    @Test func binaryValuesRoundTrip() async throws {
        try await withRedisServer { (server: RedisServerProcess) async throws in
            let pool = RedisCommandPool(endpoint: server.endpoint, timeout: .seconds(5))
            defer { pool.shutdown() }
            let key: [UInt8] = [0x6B, 0x00, 0xFF, 0x0D, 0x0A]
            let value: [UInt8] = [0x00, 0xFF, 0x00, 0x0D, 0x0A, 0x24] + (0...255).map { UInt8($0) }
            #expect(try await pool.command([Array("SET"), key, value]) == .status("OK"))
            #expect(try await pool.command([Array("GET"), key]) == .string(value))
            #expect(try await pool.command([Array("STRLEN"), key]) == .integer(value.count))
            #expect(try await pool.command([Array("SET"), Array("empty"), []]) == .status("OK"))
            #expect(try await pool.command("GET", "empty") == .string([]))
        }
    }

    @Test func replyKindsMapAndAnErrorReplyKeepsTheContext() async throws {
        try await withRedisServer { (server: RedisServerProcess) async throws in
            // One context: the error reply and the next command share it.
            let pool = RedisCommandPool(endpoint: server.endpoint, timeout: .seconds(5), size: 1)
            defer { pool.shutdown() }
            #expect(try await pool.command("PING") == .status("PONG"))
            #expect(try await pool.command("INCRBY", "n", "-7") == .integer(-7))
            #expect(try await pool.command("GET", "missing") == .null)
            #expect(try await pool.command("RPUSH", "list", "a", "b") == .integer(2))
            #expect(try await pool.command("LRANGE", "list", "0", "-1") == .array([.string(Array("a")), .string(Array("b"))]))
            #expect(try await pool.command("LRANGE", "nothing", "0", "-1") == .array([]))
            #expect(
                try await pool.command("EVAL", "return {1, {'x', false}, redis.status_reply('fine')}", "0")
                    == .array([.integer(1), .array([.string(Array("x")), .null]), .status("fine")]))
            let unknown = try await pool.command("NOSUCHCOMMAND", "arg")
            guard case .error(let message) = unknown else {
                Issue.record("expected an error reply, got \(unknown)")
                return
            }
            #expect(message.hasPrefix("ERR unknown command"))
            let wrongType = try await pool.command("INCR", "list")
            #expect(wrongType == .error("WRONGTYPE Operation against a key holding the wrong kind of value"))
            #expect(try await pool.command([[UInt8]]()) == .error("ERR empty command"))
            #expect(try await pool.command("PING") == .status("PONG"))
            #expect(pool.connectAttempts == 1)
            #expect(pool.lastError == nil)
            #expect(pool.isAvailable)
            #expect(RedisReply.status("OK").text == "OK")
            #expect(RedisReply.string([0x61]).bytes == [0x61])
            #expect(RedisReply.integer(1).text == nil)
        }
    }

    @Test func authenticatesWithThePassword() async throws {
        let password = "s3cret-Pw!"
        try await withRedisServer(password: password) { (server: RedisServerProcess) async throws in
            let pool = RedisCommandPool(endpoint: server.endpoint, timeout: .seconds(5))
            defer { pool.shutdown() }
            #expect(try await pool.command("SET", "k", "v") == .status("OK"))
            #expect(try await pool.command("GET", "k") == .string(Array("v")))

            var wrong = server.endpoint
            wrong.password = "not-the-pw"
            let refused = RedisCommandPool(endpoint: wrong, timeout: .seconds(5))
            defer { refused.shutdown() }
            let error = await #expect(throws: RedisError.self) { try await refused.command("PING") }
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
            let anonymous = RedisCommandPool(endpoint: none, timeout: .seconds(5))
            defer { anonymous.shutdown() }
            let noAuth = await #expect(throws: RedisError.self) { try await anonymous.command("GET", "k") }
            #expect(reason(noAuth)?.contains("NOAUTH") == true, "\(String(describing: noAuth))")
            #expect(anonymous.connectFailures.authentication == 1)
        }
    }

    @Test func selectsTheDatabase() async throws {
        try await withRedisServer { (server: RedisServerProcess) async throws in
            let db1 = RedisCommandPool(
                endpoint: try RedisEndpoint(url: "redis://127.0.0.1:\(server.port)/1"), timeout: .seconds(5))
            let db0 = RedisCommandPool(endpoint: server.endpoint, timeout: .seconds(5))
            defer {
                db1.shutdown()
                db0.shutdown()
            }
            #expect(try await db1.command("SET", "only-in-1", "yes") == .status("OK"))
            #expect(try await db0.command("GET", "only-in-1") == .null)
            #expect(try await db1.command("GET", "only-in-1") == .string(Array("yes")))
            #expect(try await db1.command("DBSIZE") == .integer(1))
            #expect(try await db0.command("DBSIZE") == .integer(0))

            var outOfRange = server.endpoint
            outOfRange.database = 99
            let bad = RedisCommandPool(endpoint: outOfRange, timeout: .seconds(5))
            defer { bad.shutdown() }
            let error = await #expect(throws: RedisError.self) { try await bad.command("PING") }
            #expect(reason(error)?.contains("SELECT 99") == true)
        }
    }

    @Test func pipelineRepliesComeInOrder() async throws {
        try await withRedisServer { (server: RedisServerProcess) async throws in
            let pool = RedisCommandPool(endpoint: server.endpoint, timeout: .seconds(5))
            defer { pool.shutdown() }
            let commands: [[String]] = [
                ["SET", "p", "1"], ["INCR", "p"], ["GET", "p"], ["BOGUS"], ["GET", "none"], ["INCRBY", "p", "40"],
            ]
            let replies = try await pool.pipeline(commands.map { $0.map { Array($0.utf8) } })
            #expect(replies.count == 6)
            #expect(replies[0] == .status("OK"))
            #expect(replies[1] == .integer(2))
            #expect(replies[2] == .string(Array("2")))
            if case .error(let message) = replies[3] {
                #expect(message.hasPrefix("ERR unknown command"))
            } else {
                Issue.record("expected an error reply, got \(replies[3])")
            }
            #expect(replies[4] == .null)
            #expect(replies[5] == .integer(42))
            #expect(try await pool.pipeline([]) == [])
            let many = try await pool.pipeline((1...100).map { _ in [Array("INCR"), Array("seq")] })
            #expect(many == (1...100).map { .integer($0) })
        }
    }

    @Test func concurrentCommandsAllCount() async throws {
        try await withRedisServer { (server: RedisServerProcess) async throws in
            let pool = RedisCommandPool(endpoint: server.endpoint, timeout: .seconds(10), size: 4)
            defer { pool.shutdown() }
            let failures = await withTaskGroup(of: Int.self) { group in
                for _ in 0..<200 {
                    group.addTask {
                        var failures = 0
                        for _ in 0..<20 {
                            do {
                                guard case .integer = try await pool.command("INCR", "counter") else {
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
            #expect(try await pool.command("GET", "counter") == .string(Array("4000")))
            #expect((1...4).contains(pool.connectAttempts))
            #expect(pool.isAvailable)
        }
    }

    /// One worker sends the jobs waiting for it as one pipeline: each caller still gets its own replies, in order,
    /// a pipeline's as a whole, an error reply only where its command failed.
    @Test func jobsSentTogetherGetTheirOwnReplies() async throws {
        try await withRedisServer { (server: RedisServerProcess) async throws in
            let pool = RedisCommandPool(endpoint: server.endpoint, timeout: .seconds(10), size: 1)
            defer { pool.shutdown() }
            let wrong = await withTaskGroup(of: Int.self) { group in
                for caller in 0..<300 {
                    group.addTask {
                        do {
                            switch caller % 3 {
                            case 0:
                                return try await pool.command("ECHO", "caller \(caller)") == .string(Array("caller \(caller)".utf8)) ? 0 : 1
                            case 1:
                                let replies = try await pool.pipeline([
                                    [Array("SET".utf8), Array("k\(caller)".utf8), Array("v\(caller)".utf8)],
                                    [Array("BOGUS".utf8)],
                                    [Array("GET".utf8), Array("k\(caller)".utf8)],
                                ])
                                guard replies.count == 3, replies[0] == .status("OK"), case .error = replies[1],
                                    replies[2] == .string(Array("v\(caller)".utf8))
                                else { return 1 }
                                return 0
                            default:
                                return try await pool.command("INCR", "n") != .null ? 0 : 1
                            }
                        } catch {
                            return 1
                        }
                    }
                }
                return await group.reduce(0, +)
            }
            #expect(wrong == 0)
            #expect(try await pool.command("GET", "n") == .string(Array("100".utf8)))
            #expect(pool.connectAttempts == 1)
        }
    }

    /// Commands go to the first connection with the fewest in flight: one after another they all share the first
    /// connection; while a command blocks it (BLPOP), the next goes to a second one and is answered at once.
    @Test func commandsShareOneConnectionUntilItIsBusy() async throws {
        try await withRedisServer { (server: RedisServerProcess) async throws in
            let pool = RedisCommandPool(endpoint: server.endpoint, timeout: .seconds(30), size: 4)
            defer { pool.shutdown() }
            for _ in 0..<20 { #expect(try await pool.command("PING") == .status("PONG")) }
            #expect(pool.connectAttempts == 1)
            let blocked = Task { try await pool.command("BLPOP", "never-pushed", "0") }
            // Until the BLPOP is in flight on the first connection, a PING could still take it: wait for Redis to
            // report one blocked client.
            await waitUntil("the BLPOP blocks") {
                guard case .string(let info)? = try? await pool.command("INFO", "clients") else { return false }
                return String(decoding: info, as: UTF8.self).contains("blocked_clients:1")
            }
            #expect(try await pool.command("PING") == .status("PONG"))
            #expect(pool.connectAttempts == 2)
            #expect(try await pool.command("RPUSH", "never-pushed", "x") == .integer(1))
            #expect(try await blocked.value == .array([.string(Array("never-pushed")), .string(Array("x"))]))
        }
    }

    /// A pool of four connections on a loop of its own, its first connection made, then its loop held (a task
    /// waits on it) while `body` sends commands: they wait in an outbox until `body` calls `release`.
    private func withHeldLoop(_ body: (_ pool: RedisCommandPool, _ release: () -> Void) async throws -> Void) async throws {
        try await withRedisServer { (server: RedisServerProcess) async throws in
            let group = MultiThreadedEventLoopGroup(numberOfThreads: 1)
            defer { group.shutdownGracefully { _ in } }
            let pool = RedisCommandPool(endpoint: server.endpoint, timeout: .seconds(30), size: 4, eventLoopGroup: group)
            defer { pool.shutdown() }
            #expect(try await pool.command("PING") == .status("PONG"))
            let held = DispatchSemaphore(value: 0)
            group.next().execute { held.wait() }
            defer { held.signal() }  // a second signal is harmless; a missing one would hold the loop for good
            try await body(pool) { held.signal() }
        }
    }

    /// The commands sent while the loop is held wait in the first connection's outbox, each with one more in flight
    /// there than on the idle connections, and all join it (fewest-in-flight alone would spread them over the four,
    /// one connect each).
    @Test func commandsSentWhileTheLoopIsBusyShareOneWrite() async throws {
        try await withHeldLoop { (pool: RedisCommandPool, release: () -> Void) async throws in
            let replies = NIOLockedValueBox<[Result<RedisReply, RedisError>]>([])
            let answered = Latch()
            for _ in 0..<8 {
                pool.command([Array("PING".utf8)]) { reply in
                    if replies.withLockedValue({ $0.append(reply); return $0.count }) == 8 { answered.open() }
                }
            }
            release()
            await answered.wait()
            #expect(replies.withLockedValue { $0 }.allSatisfy { (try? $0.get()) == .status("PONG") })
            #expect(pool.connectAttempts == 1)
        }
    }

    /// A blocking command waiting in the outbox with others is not joined: a command sent after it goes elsewhere
    /// instead of waiting behind it until something is pushed.
    @Test func nothingJoinsABlockingCommand() async throws {
        try await withHeldLoop { (pool: RedisCommandPool, release: () -> Void) async throws in
            let popped = NIOLockedValueBox<Result<RedisReply, RedisError>?>(nil)
            let poppedLatch = Latch()
            pool.command(["BLPOP", "pushed-later", "0"].map { Array($0.utf8) }) { reply in
                popped.withLockedValue { $0 = reply }
                poppedLatch.open()
            }
            let pinged = Latch()
            pool.command([Array("PING".utf8)]) { _ in pinged.open() }
            release()
            await pinged.wait()
            #expect(popped.withLockedValue { $0 } == nil)
            #expect(try await pool.command("RPUSH", "pushed-later", "x") == .integer(1))
            await poppedLatch.wait()
            #expect((try? popped.withLockedValue { $0 }?.get()) == .array([.string(Array("pushed-later")), .string(Array("x"))]))
        }
    }

    /// A reply to a callback is given on the pool's loop: there, the dedicated loop's thread reports SCHED_BATCH (3).
    @Test func theDedicatedLoopRunsAsABatchThread() async throws {
        try await withRedisServer { (server: RedisServerProcess) async throws in
            let pool = RedisCommandPool(endpoint: server.endpoint, timeout: .seconds(30), dedicatedEventLoop: true)
            defer { pool.shutdown() }
            let policy = NIOLockedValueBox<Int32?>(nil)
            let answered = Latch()
            pool.command([Array("PING".utf8)]) { _ in
                policy.withLockedValue { $0 = sched_getscheduler(0) }
                answered.open()
            }
            await answered.wait()
            let batch: Int32 = 3
            #expect(policy.withLockedValue { $0 } == batch)
        }
    }

    @Test func shutdownIsFinalAndIdempotent() async throws {
        try await withRedisServer { (server: RedisServerProcess) async throws in
            let pool = RedisCommandPool(endpoint: server.endpoint, timeout: .seconds(5))
            #expect(try await pool.command("PING") == .status("PONG"))
            pool.shutdown()
            pool.shutdown()
            #expect(!pool.isAvailable)
            let error = await #expect(throws: RedisError.self) { try await pool.command("PING") }
            #expect(reason(error)?.contains("shut down") == true)
        }
    }

    @Test func aPoolThatIsNeverUsedStartsNothing() {
        let pool = RedisCommandPool(
            endpoint: RedisEndpoint(host: "127.0.0.1", port: 1), timeout: .milliseconds(50))
        #expect(pool.isAvailable)
        #expect(pool.lastError == nil)
        #expect(pool.connectAttempts == 0)
        pool.shutdown()
    }
}
