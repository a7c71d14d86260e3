/// Where and how one connection reaches a Redis node.
public struct RedisConnectionConfiguration: Sendable, Hashable, CustomStringConvertible {
    public var host: String
    public var port: Int
    /// nil: plain TCP.
    public var tls: RedisTLSOptions?
    /// An ACL user (`AUTH user password`); nil with a password: `AUTH password` (the default user).
    public var username: String?
    public var password: String?
    /// `SELECT`ed on connect when not 0.
    public var database: Int
    /// The default bound of one `send` (`--redis-timeout`); past it the commands in flight fail and the connection closes.
    public var commandTimeout: Duration
    /// The bound of the TCP connect, and of the handshake with AUTH and SELECT.
    public var connectTimeout: Duration
    public var limits: RESPLimits

    public init(
        host: String, port: Int = 6379, tls: RedisTLSOptions? = nil, username: String? = nil, password: String? = nil,
        database: Int = 0, commandTimeout: Duration = .milliseconds(50), connectTimeout: Duration = .seconds(2),
        limits: RESPLimits = RESPLimits()
    ) {
        self.host = host
        self.port = port
        self.tls = tls
        self.username = username
        self.password = password
        self.database = database
        self.commandTimeout = commandTimeout
        self.connectTimeout = connectTimeout
        self.limits = limits
    }

    /// `host:port`, with the scheme and the user; never the password.
    public var description: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        let user = username.map { "\($0)@" } ?? ""
        return "\(tls == nil ? "redis" : "rediss")://\(user)\(shownHost):\(port)/\(database)"
    }

    /// The commands sent on every new connection: AUTH, SELECT; a PING when there is neither, so that a refused TLS
    /// handshake or a dead server shows at connect.
    var handshake: [[RESPArgument]] {
        var commands: [[RESPArgument]] = []
        if let password {
            commands.append(username.map { ["AUTH", RESPArgument($0), RESPArgument(password)] } ?? ["AUTH", RESPArgument(password)])
        }
        if database != 0 { commands.append(["SELECT", RESPArgument(database)]) }
        return commands.isEmpty ? [["PING"]] : commands
    }
}
