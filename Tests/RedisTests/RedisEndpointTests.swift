import Testing

@testable import Redis

@Suite(.timeLimit(.minutes(10))) struct RedisEndpointTests {
    @Test(arguments: [
        ("redis://localhost", RedisEndpoint(host: "localhost", port: 6379)),
        ("REDIS://cache.internal", RedisEndpoint(host: "cache.internal", port: 6379)),
        ("redis://127.0.0.1:6380", RedisEndpoint(host: "127.0.0.1", port: 6380)),
        ("redis://127.0.0.1:6380/", RedisEndpoint(host: "127.0.0.1", port: 6380)),
        ("redis://h/3", RedisEndpoint(host: "h", port: 6379, database: 3)),
        ("redis://:s3cret@h:1/2", RedisEndpoint(host: "h", port: 1, password: "s3cret", database: 2)),
        ("redis://default:s3cret@h", RedisEndpoint(host: "h", port: 6379, user: "default", password: "s3cret")),
        ("redis://unicache:p%40ss@h:6380/1", RedisEndpoint(host: "h", port: 6380, user: "unicache", password: "p@ss", database: 1)),
        ("redis://svc%2Da:pw@h", RedisEndpoint(host: "h", port: 6379, user: "svc-a", password: "pw")),
        ("redis://:p%40ss%2Fw%3a@h:7000", RedisEndpoint(host: "h", port: 7000, password: "p@ss/w:")),
        ("redis://:p@ss@h", RedisEndpoint(host: "h", port: 6379, password: "p@ss")),
        ("redis://:@h", RedisEndpoint(host: "h", port: 6379)),
        ("redis://[::1]:7001/4", RedisEndpoint(host: "::1", port: 7001, database: 4)),
        ("redis://[::1]", RedisEndpoint(host: "::1", port: 6379)),
    ])
    func parsesEveryForm(url: String, expected: RedisEndpoint) throws {
        #expect(try RedisEndpoint(url: url) == expected)
    }

    @Test(arguments: [
        ("http://h", "scheme must be redis://, rediss:// or redis-sentinel:// (got http://)"),
        ("redis-sentinel://h", "needs ?master=NAME"),
        ("localhost:6379", "must look like redis://"),
        ("redis://", "no host"),
        ("redis://:pw@", "no host"),
        ("redis://h:0", "port must be a number from 1 to 65535 (got 0)"),
        ("redis://h:70000", "port must be a number from 1 to 65535 (got 70000)"),
        ("redis://h:", "port must be a number from 1 to 65535"),
        ("redis://h:abc", "port must be a number from 1 to 65535"),
        ("redis://h:+12", "port must be a number from 1 to 65535"),
        ("redis://h/x", "database must be a number"),
        ("redis://h/-1", "database must be a number from 0 to 999999999 (got -1)"),
        ("redis://h/1/2", "database must be a number"),
        ("redis://h?db=1", "must not have a query"),
        ("redis://[::1", "unclosed ["),
        ("redis://:p%zz@h", "invalid percent-encoding"),
        ("redis://:p%ff@h", "invalid percent-encoding (or is not UTF-8)"),
        ("redis://user@h", "names a user without a password"),
        ("redis://us%20er:pw@h", "user has an invalid percent-encoding or a space"),
    ])
    func rejectsBadInput(url: String, expectedMessage: String) {
        let error = #expect(throws: RedisError.self) { try RedisEndpoint(url: url) }
        guard case .invalidURL(let message)? = error else {
            Issue.record("not an invalid URL: \(String(describing: error))")
            return
        }
        #expect(message.contains(expectedMessage), "\(message)")
        #expect(error?.description == message && error?.reason == message)
        #expect(!message.contains("\n"))
    }

    @Test(arguments: [
        "redis://:hunter2@h:abc", "redis://user:hunter2@h/xyz", "redis://default:hunter2",
        "redis://:hunter2@", "redis://:hunter2%zz@h", "redis://:hunter2@h?x",
    ])
    func errorsNeverShowThePassword(url: String) {
        let error = #expect(throws: RedisError.self) { try RedisEndpoint(url: url) }
        #expect(error != nil)
        #expect(error?.reason.contains("hunter2") == false, "\(error?.reason ?? "")")
    }

    /// CONTRACT §10.3: the Sentinels, the group, their own password; the data nodes' user and password.
    @Test func sentinelURLsNameTheGroup() throws {
        let endpoint = try RedisEndpoint(url: "redis-sentinel://app:pw@s1,s2:26380/2?master=cache&sentinel-password=sp&tls=true")
        #expect(endpoint.target == .sentinel(
            sentinels: [.init(host: "s1", port: 26379), .init(host: "s2", port: 26380)], masterName: "cache", password: "sp"))
        #expect(endpoint.user == "app" && endpoint.password == "pw" && endpoint.database == 2 && endpoint.tls != nil)
        #expect(endpoint.description == "redis-sentinel://app:***@s1:26379,s2:26380/2?master=cache&sentinel-password=***&tls=true")
    }

    @Test func descriptionMasksThePassword() throws {
        let endpoint = try RedisEndpoint(url: "redis://default:hunter2@cache:6380/2")
        #expect(endpoint.description == "redis://default:***@cache:6380/2")
        #expect(RedisEndpoint(host: "h", port: 1, password: "x").description == "redis://:***@h:1/0")
        #expect(!"\(endpoint)".contains("hunter2"))
        #expect(RedisEndpoint(host: "h", port: 1).description == "redis://h:1/0")
        #expect(RedisEndpoint(host: "::1", port: 2, database: 3).description == "redis://[::1]:2/3")
    }

    /// CONTRACT §10.2: an ACL user authenticates as itself; without one, the default user.
    @Test func authNamesTheUser() {
        #expect(RedisEndpoint(host: "h", port: 1).handshake == [RedisCommand("PING")])
        #expect(RedisEndpoint(host: "h", port: 1, password: "pw").handshake == [RedisCommand("AUTH", "pw")])
        #expect(RedisEndpoint(host: "h", port: 1, user: "app", password: "pw").handshake == [RedisCommand("AUTH", "app", "pw")])
        #expect(
            RedisEndpoint(host: "h", port: 1, user: "app", password: "pw", database: 2).handshake
                == [RedisCommand("AUTH", "app", "pw"), RedisCommand("SELECT", "2")])
    }

    @Test func descriptionParsesBackWithoutThePassword() throws {
        let endpoint = RedisEndpoint(host: "10.0.0.1", port: 6390, password: "x", database: 5)
        let reparsed = try RedisEndpoint(url: endpoint.description)
        #expect(reparsed == RedisEndpoint(host: "10.0.0.1", port: 6390, password: "***", database: 5))
    }
}
