import Breaker
import NIOConcurrencyHelpers
import Redis
import RedisTestSupport
import TestSupport
import Testing

/// A refusal of the user's credentials or permissions (`WRONGPASS`, `NOAUTH`, `NOPERM`) is told apart from an outage
/// (`RedisError.refused`), counted with the refused connects, logged once per back-off naming the user, and never
/// carries Redis's text (which may repeat the password) or the password into a reason or a log line.
@Suite("Refusals of the user", .timeLimit(.minutes(2)))
struct RedisRefusalTests {
    /// A back-off longer than the test: every line logged is the first of its back-off.
    static let longBackoff = CircuitBreaker.Configuration(threshold: 3, initialBackoff: .seconds(600), maximumBackoff: .seconds(600))

    /// A server with the ACL user `app` (password `pw`) under `rules`, and the default user off.
    private func withACLServer(_ rules: [String], _ body: (RedisServerProcess) async throws -> Void) async throws {
        try await withService(RedisServerProcess.start(extraArguments: ["--user", "app", "on", ">pw"] + rules + ["--user", "default", "off"])) {
            try await body($0)
        }
    }

    private func errors(_ node: RedisNodeClient, _ count: Int, _ command: RedisCommand) async -> [RedisError] {
        var errors: [RedisError] = []
        for _ in 0..<count {
            do { _ = try await node.send(command) } catch { errors.append(error) }
        }
        return errors
    }

    @Test func aWrongPasswordIsARefusalNamingTheUserLoggedOnce() async throws {
        try await withACLServer(["~unicache:*", "+@all"]) { server in
            let store = CapturingLogHandler.Store()
            let node = RedisNodeClient(
                endpoint: RedisEndpoint(host: "127.0.0.1", port: server.port, user: "app", password: "not-pw-81b2"),
                timeout: .seconds(5), clock: ContinuousClock(), breaker: Self.longBackoff, logger: CapturingLogHandler.logger(store))
            defer { node.shutdown() }
            let failures = await errors(node, 20, .get("unicache:k"))
            #expect(failures.count == 20)
            #expect(failures.allSatisfy { if case .refused = $0 { true } else { false } }, "\(failures)")
            #expect(node.connectFailures.authentication == 3)
            let lines = store.rendered.filter { $0.contains("Redis connect failed") }
            #expect(lines.count == 1, "\(lines)")
            #expect(lines.first?.contains(
                "AUTH as app on redis://app:***@127.0.0.1:\(server.port)/0 was refused: WRONGPASS (the user name or password is wrong, or the user is disabled)")
                == true, "\(lines)")
            for text in store.rendered + failures.map(\.reason) {
                #expect(!text.contains("not-pw-81b2") && !text.contains("invalid username-password pair"))
            }
        }
    }

    @Test func permissionsRefusedToCommandsAreCountedAndLoggedOnceNamingTheUser() async throws {
        try await withACLServer(["~other:*", "+@all"]) { server in
            let store = CapturingLogHandler.Store()
            let node = RedisNodeClient(
                endpoint: RedisEndpoint(host: "127.0.0.1", port: server.port, user: "app", password: "pw"),
                timeout: .seconds(5), clock: ContinuousClock(), logger: CapturingLogHandler.logger(store))
            defer { node.shutdown() }
            for _ in 0..<10 {
                let reply = try await node.send(RedisCommand("GET", "unicache:k"))
                #expect(reply.isRefusal)
                #expect(reply.errorSummary == "NOPERM (the user's ACL rules do not allow the command, key or channel)")
            }
            #expect(node.connectFailures.authentication == 10)
            #expect(node.isAvailable)
            let lines = store.rendered.filter { $0.contains("Redis refused a command for the user's permissions") }
            #expect(lines.count == 1, "\(store.rendered)")
            #expect(lines.first?.contains("user=app") == true && lines.first?.contains("commands=GET") == true)
            #expect(!store.rendered.contains { $0.contains("has no permissions") })
        }
    }

    @Test func aChannelTheRulesDoNotGrantIsARefusalCounted() async throws {
        try await withACLServer(["~unicache:*", "resetchannels", "&granted", "+@all"]) { server in
            let failures = RedisConnectFailures()
            let events = AsyncEventQueue<RedisSubscriber.Event>()
            let subscriber = RedisSubscriber(
                endpoint: RedisEndpoint(host: "127.0.0.1", port: server.port, user: "app", password: "pw"),
                channel: "unicache:events", timeout: .seconds(5), clock: ContinuousClock(), failures: failures) { events.push($0) }
            subscriber.start()
            defer { subscriber.stop() }
            guard let reason = await disconnectReason(events, within: .seconds(30)) else { return }
            #expect(reason.contains("SUBSCRIBE on redis://app:***@127.0.0.1:\(server.port)/0 as app was refused: NOPERM"), "\(reason)")
            #expect(failures.authentication >= 1)
        }
    }

    /// A server that repeats AUTH's arguments in its error (as a proxy or an old Redis may): the password reaches
    /// neither the reason, nor the log, nor the error.
    @Test func anAUTHErrorThatRepeatsThePasswordIsNeverShown() async throws {
        let peer = try await FakeRedisPeer { connection, command in
            if command.first == "AUTH" { connection.send("-ERR invalid password '\(command.last ?? "")' for user\r\n") }
        }
        try await withService(peer) { peer in
            let store = CapturingLogHandler.Store()
            let node = RedisNodeClient(
                endpoint: RedisEndpoint(host: "127.0.0.1", port: peer.port, password: "s3cret-echo-5d"),
                timeout: .seconds(5), clock: ContinuousClock(), breaker: Self.longBackoff, logger: CapturingLogHandler.logger(store))
            defer { node.shutdown() }
            let failures = await errors(node, 3, .ping)
            #expect(failures.count == 3)
            let lastError = try #require(node.lastError)
            #expect(lastError.contains("AUTH on redis://:***@127.0.0.1:\(peer.port)/0 was refused: ERR (Redis's own text is not shown"), "\(lastError)")
            for text in store.rendered + failures.map(\.reason) + [lastError] {
                #expect(!text.contains("s3cret-echo-5d") && !text.contains("invalid password"), "\(text)")
            }
        }
    }
}
