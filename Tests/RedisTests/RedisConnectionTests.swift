import NIOCore
import Redis
import RedisTestSupport
import Testing

@Suite("RedisConnection against a real redis-server")
struct RedisConnectionTests {
    @Test func pipelinesAThousandCommandsWithRepliesInOrder() async throws {
        try await withRedisServer { server in
            let connection = try await RedisConnection.connect(configuration(server))
            let commands: [[RESPArgument]] = (1...1000).map { _ in ["INCR", "unicache:counter"] }
            let replies = try await connection.send(commands)
            #expect(replies == (1...1000).map { RESPValue.integer(Int64($0)) })

            // Binary values round-trip, and an error reply takes its own place in the batch.
            let value = (0...255).map { UInt8($0) }
            let mixed = try await connection.send([
                ["SET", "unicache:binary", RESPArgument(bytes: value)], ["GET", "unicache:binary"], ["NOSUCHCOMMAND"],
                ["GET", "unicache:absent"],
            ])
            #expect(mixed[0] == .simpleString("OK"))
            #expect(mixed[1] == .bulkString(value))
            #expect(mixed[2].serverError?.kind == .err)
            #expect(mixed[3] == .null)
            await connection.close()
        }
    }

    @Test func concurrentCallersOnOneConnectionEachGetTheirOwnReply() async throws {
        try await withRedisServer { server in
            let connection = try await RedisConnection.connect(configuration(server))
            try await withThrowingTaskGroup(of: Bool.self) { tasks in
                for index in 0..<200 {
                    tasks.addTask {
                        let replies = try await connection.send([["ECHO", RESPArgument("a\(index)")], ["ECHO", RESPArgument("b\(index)")]])
                        return replies == [.bulkString(Array("a\(index)".utf8)), .bulkString(Array("b\(index)".utf8))]
                    }
                }
                for try await matched in tasks { #expect(matched) }
            }
            await connection.close()
        }
    }

    @Test func aTimeoutFailsWhatIsInFlightAndClosesTheConnection() async throws {
        try await withRedisServer { server in
            let admin = try await RedisConnection.connect(configuration(server))
            _ = try await admin.send([["SET", "unicache:a", "A"], ["SET", "unicache:b", "B"]])
            let slow = try await RedisConnection.connect(configuration(server, timeout: .milliseconds(200)))

            // Every client's commands wait until the pause ends (the OK comes back first).
            #expect(try await admin.send(["CLIENT", "PAUSE", "1500", "ALL"]) == .simpleString("OK"))
            async let second = outcome { () async throws(RedisNIOError) in
                try await slow.send(["GET", "unicache:b"], timeout: .seconds(30))
            }
            let first = await outcome { () async throws(RedisNIOError) in try await slow.send(["GET", "unicache:a"]) }
            #expect(throws: RedisNIOError.timeout) { try first.get() }
            // The other command (its own deadline far away) fails too: in flight it fails with the timeout, written
            // after the close it is refused; it never gets a reply meant for another command.
            let secondOutcome = await second
            #expect(throws: RedisNIOError.self) { try secondOutcome.get() }
            try await slow.closeFuture.get()
            #expect(!slow.isActive)
            await #expect(throws: RedisNIOError.self) { try await slow.send(["GET", "unicache:a"]) }

            // A new connection's reply is its own, after the pause.
            let fresh = try await RedisConnection.connect(configuration(server))
            #expect(try await fresh.send(["GET", "unicache:b"]) == .bulkString(Array("B".utf8)))
            await fresh.close()
            await admin.close()
        }
    }

    @Test func aConnectionTheServerClosesFailsPendingAndRefusesNewCommands() async throws {
        try await withRedisServer { server in
            let connection = try await RedisConnection.connect(configuration(server))
            let admin = try await RedisConnection.connect(configuration(server))
            _ = try await admin.send(["CLIENT", "PAUSE", "1000", "ALL"])
            let pending = Task { await outcome { () async throws(RedisNIOError) in try await connection.send(["PING"]) } }
            // The server dies while the PING may wait (paused); whether it was written yet or not, it fails.
            await server.kill()
            let pendingOutcome = await pending.value
            #expect(throws: RedisNIOError.connectionClosed) { try pendingOutcome.get() }
            await #expect(throws: RedisNIOError.connectionClosed) { try await connection.send(["PING"]) }
            await admin.close()
        }
    }

    @Test func aRefusedConnectIsAConnectError() async throws {
        let reserved = try ReservedPort()
        defer { reserved.release() }
        let configuration = RedisConnectionConfiguration(host: "127.0.0.1", port: reserved.port)
        await #expect(throws: RedisNIOError.self) { try await RedisConnection.connect(configuration) }
    }

    @Test func aSubscriptionDeliversMessagesAnswersPingAndEndsWhenTheConnectionDrops() async throws {
        try await withRedisServer { server in
            let subscription = try await RedisSubscription.connect(configuration(server))
            try await subscription.subscribe(["unicache:events", "unicache:other"])
            try await subscription.ping()
            let publisher = try await RedisConnection.connect(configuration(server))
            #expect(try await publisher.send(["PUBLISH", "unicache:events", RESPArgument(bytes: [0, 1, 2])]) == .integer(1))
            #expect(try await publisher.send(["PUBLISH", "unicache:other", "two"]) == .integer(1))
            var iterator = subscription.messages.makeAsyncIterator()
            #expect(await iterator.next() == RedisPubSubMessage(channel: "unicache:events", payload: [0, 1, 2]))
            #expect(await iterator.next() == RedisPubSubMessage(channel: "unicache:other", payload: Array("two".utf8)))
            try await subscription.ssubscribe(["unicache:sharded"])
            #expect(try await publisher.send(["SPUBLISH", "unicache:sharded", "three"]) == .integer(1))
            #expect(await iterator.next() == RedisPubSubMessage(channel: "unicache:sharded", payload: Array("three".utf8), isSharded: true))

            _ = try await publisher.send(["CLIENT", "KILL", "TYPE", "pubsub"])
            #expect(await iterator.next() == nil)
            #expect(!subscription.isActive)
            await publisher.close()
        }
    }
}

/// What `body` returned or threw, as a value.
func outcome<Value>(_ body: () async throws(RedisNIOError) -> Value) async -> Result<Value, RedisNIOError> {
    do {
        return .success(try await body())
    } catch {
        return .failure(error)
    }
}
