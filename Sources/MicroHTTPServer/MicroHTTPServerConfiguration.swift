/// Limits and binding of one `MicroHTTPServer` (contract §1 defaults).
public struct MicroHTTPServerConfiguration: Sendable, Equatable {
    /// Bind address: an IPv4/IPv6 literal or a resolvable name.
    public var host: String
    /// 0 picks a free port; `MicroHTTPServer.start()` returns the real one.
    public var port: Int
    /// Open connections at once.
    public var maxConnections: Int
    /// Open connections per client address.
    public var maxConnectionsPerIP: Int
    /// A connection idle this long is closed (whole seconds, rounded up).
    public var idleTimeout: Duration
    /// Deadline of one async request's handling; past it the client gets 504.
    public var requestTimeout: Duration
    /// Largest accepted request body; larger ones get 413.
    public var maxBodyBytes: Int
    /// Async requests queued or running at once; past it new ones get 503.
    public var maxPendingRequests: Int
    /// MHD's per-connection memory pool: the request line and headers must fit (with 16 KiB, about 12 KiB of
    /// them; larger is answered 431 by libmicrohttpd). MHD zeroes the whole pool after every request, so its
    /// size is CPU per request: 16 KiB instead of MHD's 32 KiB default saves ~0.5 µs of ~10 µs.
    public var connectionMemoryLimit: Int
    /// How long a graceful shutdown waits for in-flight requests.
    public var shutdownTimeout: Duration

    public init(
        host: String = "127.0.0.1",
        port: Int = 8080,
        maxConnections: Int = 4096,
        maxConnectionsPerIP: Int = 1024,
        idleTimeout: Duration = .seconds(30),
        requestTimeout: Duration = .seconds(30),
        maxBodyBytes: Int = 1 << 20,
        maxPendingRequests: Int = 4096,
        connectionMemoryLimit: Int = 16 << 10,
        shutdownTimeout: Duration = .seconds(10)
    ) {
        self.host = host
        self.port = port
        self.maxConnections = maxConnections
        self.maxConnectionsPerIP = maxConnectionsPerIP
        self.idleTimeout = idleTimeout
        self.requestTimeout = requestTimeout
        self.maxBodyBytes = maxBodyBytes
        self.maxPendingRequests = maxPendingRequests
        self.connectionMemoryLimit = connectionMemoryLimit
        self.shutdownTimeout = shutdownTimeout
    }
}
