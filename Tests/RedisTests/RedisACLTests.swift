import Redis
import RedisTestSupport
import TestSupport
import Testing

@Suite("AUTH with ACL users and passwords")
struct RedisACLTests {
    /// The error reply `body` throws (`RedisError.errorReply`); nil, with an issue, when it throws nothing or something
    /// else.
    private func refusal(
        sourceLocation: SourceLocation = #_sourceLocation, _ body: () async throws(RedisError) -> Void
    ) async -> RedisErrorReply? {
        await caught(\.errorReplyValue, sourceLocation: sourceLocation, in: body)
    }

    @Test func anACLUserConnectsAndAWrongPasswordIsToldApart() async throws {
        try await withRedisServer { server in
            let admin = try await connect(server)
            let setup = try await admin.send([
                RedisCommand("ACL", "SETUSER", "app", "on", ">pw", "~unicache:*", "&unicache:*", "+@all"),
                RedisCommand("ACL", "SETUSER", "default", "off"),
            ])
            #expect(setup == [.status("OK"), .status("OK")])
            await admin.close()

            var app = endpoint(server)
            app.user = "app"
            app.password = "pw"
            app.database = 1
            let connection = try await connect(app)
            #expect(try await connection.send(RedisCommand("SET", "unicache:k", "v")) == .status("OK"))
            #expect(try await connection.send(RedisCommand("SET", "other:k", "v")).errorReply?.kind == .noPerm)
            #expect(try await connection.send(RedisCommand("ACL", "WHOAMI")) == .string(Array("app".utf8)))
            await connection.close()

            // The subscription authenticates the same way, and may use only the granted channels.
            let subscription = try await RedisSubscription.connect(app, timeout: .seconds(5), connectTimeout: .seconds(5))
            try await subscription.subscribe(["unicache:events"])
            let refused = await refusal { () async throws(RedisError) in try await subscription.subscribe(["elsewhere"]) }
            #expect(refused?.kind == .noPerm)
            await subscription.close()

            var wrong = app
            wrong.password = "not-pw"
            let wrongPass = await refusal { () async throws(RedisError) in _ = try await connect(wrong) }
            #expect(wrongPass?.kind == .wrongPass)
            #expect(wrongPass?.isAuthenticationError == true)

            // Without AUTH, the default user is off: the first command is refused NOAUTH.
            let anonymous = await refusal { () async throws(RedisError) in _ = try await connect(server) }
            #expect(anonymous?.kind == .noAuth)
        }
    }

    @Test func aPasswordAloneAuthenticatesTheDefaultUser() async throws {
        try await withRedisServers { group in
            let server = try await group.start(["--requirepass", "s3cret"])
            var withPassword = endpoint(server)
            withPassword.password = "s3cret"
            let connection = try await connect(withPassword)
            #expect(try await connection.send(RedisCommand("ACL", "WHOAMI")) == .string(Array("default".utf8)))
            await connection.close()
            withPassword.password = "wrong"
            let refused = await refusal { () async throws(RedisError) in _ = try await connect(withPassword) }
            #expect(refused?.kind == .wrongPass)
        }
    }
}
