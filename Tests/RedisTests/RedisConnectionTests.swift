import NIOCore
import Redis
import RedisTestSupport
import Testing

@Suite("RedisConnection against a real redis-server")
struct RedisConnectionTests {
    @Test func pipelinesAThousandCommandsWithRepliesInOrder() async throws {
        try await withRedisServer { server in
            let connection = try await connect(server)
            let commands = (1...1000).map { _ in RedisCommand("INCR", "unicache:counter") }
            let replies = try await connection.send(commands)
            #expect(replies == (1...1000).map { RedisReply.integer($0) })

            // Binary values round-trip, and an error reply takes its own place in the batch.
            let value = (0...255).map { UInt8($0) }
            let mixed = try await connection.send([
                RedisCommand("SET", arguments: [Array("unicache:binary".utf8), value]), .get("unicache:binary"),
                RedisCommand("NOSUCHCOMMAND"), .get("unicache:absent"),
            ])
            #expect(mixed[0] == .status("OK"))
            #expect(mixed[1] == .string(value))
            #expect(mixed[2].errorReply?.kind == .err)
            #expect(mixed[3] == .null)
            await connection.close()
        }
    }

    @Test func concurrentCallersOnOneConnectionEachGetTheirOwnReply() async throws {
        try await withRedisServer { server in
            let connection = try await connect(server)
            try await withThrowingTaskGroup(of: Bool.self) { tasks in
                for index in 0..<200 {
                    tasks.addTask {
                        let replies = try await connection.send([RedisCommand("ECHO", "a\(index)"), RedisCommand("ECHO", "b\(index)")])
                        return replies == [.string(Array("a\(index)".utf8)), .string(Array("b\(index)".utf8))]
                    }
                }
                for try await matched in tasks { #expect(matched) }
            }
            await connection.close()
        }
    }

    @Test func aTimeoutFailsWhatIsInFlightAndClosesTheConnection() async throws {
        try await withRedisServer { server in
            let admin = try await connect(server)
            _ = try await admin.send([RedisCommand("SET", "unicache:a", "A"), RedisCommand("SET", "unicache:b", "B")])
            let slow = try await connect(server, timeout: .milliseconds(200))

            // Every client's commands wait until the pause ends (the OK comes back first). The 200 ms timeout is
            // meant to fire; 3 s of pause leave a loaded machine time to send the command inside it, and `fresh`'s
            // handshake below (held until the pause ends) stays within its 5 s connect timeout.
            #expect(try await admin.send(RedisCommand("CLIENT", "PAUSE", "3000", "ALL")) == .status("OK"))
            async let second = outcome { () async throws(RedisError) in
                try await slow.send(.get("unicache:b"), timeout: .seconds(30))
            }
            let first = await outcome { () async throws(RedisError) in try await slow.send(.get("unicache:a")) }
            #expect(throws: RedisError.timeout) { try first.get() }
            // The other command (its own deadline far away) fails too: in flight it fails with the timeout, written
            // after the close it is refused; it never gets a reply meant for another command.
            let secondOutcome = await second
            #expect(throws: RedisError.self) { try secondOutcome.get() }
            try await slow.closeFuture.get()
            #expect(!slow.isActive)
            await #expect(throws: RedisError.self) { try await slow.send(.get("unicache:a")) }

            // A new connection's reply is its own, after the pause.
            let fresh = try await connect(server)
            #expect(try await fresh.send(.get("unicache:b")) == .string(Array("B".utf8)))
            await fresh.close()
            await admin.close()
        }
    }

    @Test func aConnectionTheServerClosesFailsPendingAndRefusesNewCommands() async throws {
        try await withRedisServer { server in
            let connection = try await connect(server)
            let admin = try await connect(server)
            _ = try await admin.send(RedisCommand("CLIENT", "PAUSE", "1000", "ALL"))
            let pending = Task { await outcome { () async throws(RedisError) in try await connection.send(.ping) } }
            // The server dies while the PING may wait (paused); whether it was written yet or not, it fails.
            await server.kill()
            let pendingOutcome = await pending.value
            #expect(throws: RedisError.connectionClosed) { try pendingOutcome.get() }
            await #expect(throws: RedisError.connectionClosed) { try await connection.send(.ping) }
            await admin.close()
        }
    }

    @Test func aRefusedConnectIsAConnectError() async throws {
        let reserved = try ReservedPort()
        defer { reserved.release() }
        let endpoint = RedisEndpoint(host: "127.0.0.1", port: reserved.port)
        let error = await #expect(throws: RedisError.self) { try await RedisConnection.connect(endpoint) }
        #expect(error == .connectFailed("refused (nothing accepts connections there)"))
    }

    @Test func aSubscriptionDeliversMessagesAnswersPingAndEndsWhenTheConnectionDrops() async throws {
        try await withRedisServer { server in
            let subscription = try await RedisSubscription.connect(endpoint(server), timeout: .seconds(5), connectTimeout: .seconds(5))
            try await subscription.subscribe(["unicache:events", "unicache:other"])
            try await subscription.ping()
            let publisher = try await connect(server)
            #expect(try await publisher.send(RedisCommand("PUBLISH", arguments: [Array("unicache:events".utf8), [0, 1, 2]])) == .integer(1))
            #expect(try await publisher.send(RedisCommand("PUBLISH", "unicache:other", "two")) == .integer(1))
            var iterator = subscription.messages.makeAsyncIterator()
            #expect(await iterator.next() == RedisPubSubMessage(channel: "unicache:events", payload: [0, 1, 2]))
            #expect(await iterator.next() == RedisPubSubMessage(channel: "unicache:other", payload: Array("two".utf8)))
            try await subscription.ssubscribe(["unicache:sharded"])
            #expect(try await publisher.send(RedisCommand("SPUBLISH", "unicache:sharded", "three")) == .integer(1))
            #expect(await iterator.next() == RedisPubSubMessage(channel: "unicache:sharded", payload: Array("three".utf8), isSharded: true))

            _ = try await publisher.send(RedisCommand("CLIENT", "KILL", "TYPE", "pubsub"))
            #expect(await iterator.next() == nil)
            #expect(!subscription.isActive)
            await publisher.close()
        }
    }
}

/// What `body` returned or threw, as a value.
func outcome<Value>(_ body: () async throws(RedisError) -> Value) async -> Result<Value, RedisError> {
    do {
        return .success(try await body())
    } catch {
        return .failure(error)
    }
}
