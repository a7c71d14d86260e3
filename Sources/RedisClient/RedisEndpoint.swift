import RedisNIO

/// Where Redis is: parsed from `redis://[[user]:password@]host[:port][/db]` or `rediss://…` (TLS) by RedisNIO's
/// `RedisURL` (the one parser of Redis URLs).
///
/// With a user name the connection authenticates as that ACL user (`AUTH user password`, CONTRACT §10.2); without
/// one, a one-argument AUTH authenticates Redis's default user. User and password may be percent-encoded (`%40`
/// for `@`). IPv6 hosts go in brackets (`[::1]`).
public struct RedisEndpoint: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int
    /// The ACL user (Redis 6+); `nil`: the default user.
    public var user: String?
    public var password: String?
    public var database: Int
    /// TLS to the node (`rediss://`): how its certificate is verified; `nil`: plain TCP.
    public var tls: RedisTLSOptions?

    public init(
        host: String, port: Int, user: String? = nil, password: String? = nil, database: Int = 0,
        tls: RedisTLSOptions? = nil
    ) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.database = database
        self.tls = tls
    }

    /// The AUTH command a new connection sends: `AUTH user password` for an ACL user, `AUTH password` for the
    /// default one; `nil` without a password.
    public var authArguments: [String]? {
        guard let password else { return nil }
        if let user { return ["AUTH", user, password] }
        return ["AUTH", password]
    }

    public init(url: String) throws(RedisEndpointError) {
        let parsed: RedisURL
        do {
            parsed = try RedisURL(url)
        } catch {
            throw RedisEndpointError(error.message)
        }
        guard case .node(let address) = parsed.target else {
            throw RedisEndpointError("redis-sentinel:// URLs are not supported yet")
        }
        self.init(
            host: address.host, port: address.port, user: parsed.username, password: parsed.password,
            database: parsed.database, tls: parsed.tls ? RedisTLSOptions() : nil)
    }

    /// `host:port` (IPv6 in brackets), never a password.
    public var address: String { RedisURL.Address(host: host, port: port).description }

    /// The URL with the password replaced by "***": what logs, /stats and errors may show (the user is named).
    public var description: String {
        RedisURL(
            target: .node(RedisURL.Address(host: host, port: port)), tls: tls != nil, username: user, password: password,
            database: database
        ).description
    }

    /// One connection's configuration: `timeout` bounds the connect (with AUTH and SELECT) and each command.
    func connection(timeout: Duration) -> RedisConnectionConfiguration {
        RedisConnectionConfiguration(
            host: host, port: port, tls: tls, username: user, password: password, database: database,
            commandTimeout: timeout, connectTimeout: timeout)
    }
}

/// A Redis URL that could not be parsed. The message never contains the password.
public struct RedisEndpointError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
