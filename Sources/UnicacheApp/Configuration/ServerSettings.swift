/// How the HTTP server listens and bounds its connections (CONTRACT §1).
public struct ServerSettings: Sendable, Equatable {
    /// Bind address (`--host`, `UNICACHE_HOST`).
    public var host: String
    /// 0–65535; `0` lets the system pick a free port (`--port`, `UNICACHE_PORT`).
    public var port: Int
    /// Open connections at once (`--max-connections`).
    public var maxConnections: Int
    /// Open connections per client address (`--max-connections-per-ip`).
    public var maxConnectionsPerIP: Int
    /// A connection idle this long is closed (`--idle-timeout`).
    public var idleTimeout: Duration
    /// Deadline of one request's handling; past it the client gets 504 (`--request-timeout`).
    public var requestTimeout: Duration
    /// How long shutdown waits for in-flight requests (no flag; CONTRACT §1 says 10 s).
    public var shutdownGracePeriod: Duration

    public init(
        host: String = "127.0.0.1",
        port: Int = 8080,
        maxConnections: Int = 4096,
        maxConnectionsPerIP: Int = 1024,
        idleTimeout: Duration = .seconds(30),
        requestTimeout: Duration = .seconds(30),
        shutdownGracePeriod: Duration = .seconds(10)
    ) {
        self.host = host
        self.port = port
        self.maxConnections = maxConnections
        self.maxConnectionsPerIP = maxConnectionsPerIP
        self.idleTimeout = idleTimeout
        self.requestTimeout = requestTimeout
        self.shutdownGracePeriod = shutdownGracePeriod
    }
}
