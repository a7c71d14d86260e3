import Logging
import NIOCore

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
    /// A Sentinel-watched group (`redis-sentinel://…?master=NAME`, CONTRACT §10.3): every new connection asks these
    /// Sentinels for the primary; `host` and `port` are then the first Sentinel's.
    public var sentinel: RedisSentinelGroup?

    public init(
        host: String, port: Int, user: String? = nil, password: String? = nil, database: Int = 0,
        tls: RedisTLSOptions? = nil, sentinel: RedisSentinelGroup? = nil
    ) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.database = database
        self.tls = tls
        self.sentinel = sentinel
    }

    /// The AUTH command a new connection sends: `AUTH user password` for an ACL user, `AUTH password` for the
    /// default one; `nil` without a password.
    public var authArguments: [String]? {
        guard let password else { return nil }
        if let user { return ["AUTH", user, password] }
        return ["AUTH", password]
    }

    /// `passwordGivenApart`: the password comes from elsewhere (`--redis-password-file`): a user without one is fine.
    public init(url: String, passwordGivenApart: Bool = false) throws(RedisEndpointError) {
        let parsed: RedisURL
        do {
            parsed = try RedisURL(url, passwordGivenApart: passwordGivenApart)
        } catch {
            throw RedisEndpointError(error.message)
        }
        let tls = parsed.tls ? RedisTLSOptions() : nil
        switch parsed.target {
        case .node(let address):
            self.init(
                host: address.host, port: address.port, user: parsed.username, password: parsed.password,
                database: parsed.database, tls: tls)
        case .sentinel(let sentinels, let masterName, let sentinelPassword):
            self.init(
                host: sentinels[0].host, port: sentinels[0].port, user: parsed.username, password: parsed.password,
                database: parsed.database, tls: tls,
                sentinel: RedisSentinelGroup(sentinels: sentinels, masterName: masterName, password: sentinelPassword))
        }
    }

    /// The Sentinels that are reached over plain TCP at an address that is not loopback: whoever answers there can
    /// name any primary (and so collect the data nodes' password). Empty with TLS (`?tls=true`) or without Sentinels.
    public var sentinelsTrustedUnauthenticated: [RedisURL.Address] {
        guard tls == nil, let sentinel else { return [] }
        return sentinel.sentinels.filter { !$0.isLoopback }
    }

    /// Whether the process holds a secret for Redis: a password, a TLS client key or a Sentinel password.
    public var holdsSecrets: Bool {
        password != nil || tls?.keyFile != nil || sentinel?.password != nil
    }

    /// `host:port` (IPv6 in brackets), never a password.
    public var address: String { RedisURL.Address(host: host, port: port).description }

    /// The URL with the password replaced by "***": what logs, /stats and errors may show (the user is named).
    public var description: String {
        let target: RedisURL.Target =
            sentinel.map { .sentinel(sentinels: $0.sentinels, masterName: $0.masterName, sentinelPassword: $0.password) }
            ?? .node(RedisURL.Address(host: host, port: port))
        return RedisURL(target: target, tls: tls != nil, username: user, password: password, database: database)
            .description
    }

    /// One connection's configuration (to `address`, the primary a Sentinel named, else this host and port):
    /// `timeout` bounds the connect (with AUTH and SELECT) and each command.
    func connection(timeout: Duration, at address: RedisURL.Address? = nil) -> RedisConnectionConfiguration {
        RedisConnectionConfiguration(
            host: address?.host ?? host, port: address?.port ?? port, tls: tls, username: user, password: password,
            database: database, commandTimeout: timeout, connectTimeout: timeout)
    }

    /// The Sentinels' discovery with the same TLS and bounds (their own password), or nil without a group.
    func sentinelDiscovery(timeout: Duration, eventLoopGroup: any EventLoopGroup, logger: Logger) -> RedisSentinel? {
        sentinel.map { group in
            RedisSentinel(
                sentinels: group.sentinels, masterName: group.masterName,
                sentinelTemplate: RedisConnectionConfiguration(
                    host: "", tls: tls, password: group.password, commandTimeout: timeout, connectTimeout: timeout),
                eventLoopGroup: eventLoopGroup, logger: logger)
        }
    }
}

/// The Sentinels of `redis-sentinel://` and the group they watch.
public struct RedisSentinelGroup: Sendable, Equatable {
    public var sentinels: [RedisURL.Address]
    public var masterName: String
    /// `sentinel-password=`, for Sentinels that need one (the URL's own password is the data nodes').
    public var password: String?

    public init(sentinels: [RedisURL.Address], masterName: String, password: String? = nil) {
        self.sentinels = sentinels
        self.masterName = masterName
        self.password = password
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
