import Redis
import RedisTestSupport
import Testing

@Suite("AUTH with ACL users and passwords")
struct RedisACLTests {
    @Test func anACLUserConnectsAndAWrongPasswordIsToldApart() async throws {
        try await withRedisServer { server in
            let admin = try await RedisConnection.connect(configuration(server))
            let setup = try await admin.send([
                ["ACL", "SETUSER", "app", "on", ">pw", "~unicache:*", "&unicache:*", "+@all"],
                ["ACL", "SETUSER", "default", "off"],
            ])
            #expect(setup == [.simpleString("OK"), .simpleString("OK")])
            await admin.close()

            var app = configuration(server)
            app.username = "app"
            app.password = "pw"
            app.database = 1
            let connection = try await RedisConnection.connect(app)
            #expect(try await connection.send(["SET", "unicache:k", "v"]) == .simpleString("OK"))
            #expect(try await connection.send(["SET", "other:k", "v"]).serverError?.kind == .noPerm)
            #expect(try await connection.send(["ACL", "WHOAMI"]) == .bulkString(Array("app".utf8)))
            await connection.close()

            // The subscription authenticates the same way, and may use only the granted channels.
            let subscription = try await RedisSubscription.connect(app)
            try await subscription.subscribe(["unicache:events"])
            let refused = await #expect(throws: RedisServerError.self) { try await subscription.subscribe(["elsewhere"]) }
            #expect(refused?.kind == .noPerm)
            await subscription.close()

            var wrong = app
            wrong.password = "not-pw"
            let wrongPass = await #expect(throws: RedisServerError.self) { try await RedisConnection.connect(wrong) }
            #expect(wrongPass?.kind == .wrongPass)
            #expect(wrongPass?.isAuthenticationError == true)

            // Without AUTH, the default user is off: the first command is refused NOAUTH.
            let anonymous = await #expect(throws: RedisServerError.self) { try await RedisConnection.connect(configuration(server)) }
            #expect(anonymous?.kind == .noAuth)
        }
    }

    @Test func aPasswordAloneAuthenticatesTheDefaultUser() async throws {
        try await withRedisServers { group in
            let server = try await group.start(["--requirepass", "s3cret"])
            var withPassword = configuration(server)
            withPassword.password = "s3cret"
            let connection = try await RedisConnection.connect(withPassword)
            #expect(try await connection.send(["ACL", "WHOAMI"]) == .bulkString(Array("default".utf8)))
            await connection.close()
            withPassword.password = "wrong"
            let refused = await #expect(throws: RedisServerError.self) { try await RedisConnection.connect(withPassword) }
            #expect(refused?.kind == .wrongPass)
        }
    }
}
