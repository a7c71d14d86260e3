/// Limits and binding of one `MicroHTTPServer` (contract §1 defaults).
public struct MicroHTTPServerConfiguration: Sendable, Equatable {
    /// Bind address: an IPv4/IPv6 literal or a resolvable name.
    public var host: String
    /// 0 picks a free port; `MicroHTTPServer.start()` returns the real one.
    public var port: Int
    /// Open connections at once; at the limit the connection idle the longest (no request in progress) is closed
    /// to admit a new one, else the request whose line and headers have stalled the longest (`headerStall`), else
    /// new ones wait in the listen backlog.
    public var maxConnections: Int
    /// Open connections per client address.
    public var maxConnectionsPerIP: Int
    /// A connection idle this long is closed (whole seconds, rounded up).
    public var idleTimeout: Duration
    /// A request whose line and headers are not complete this long after its first byte is closed, however
    /// slowly they trickle in (nginx's `client_header_timeout`; libmicrohttpd's own timeout restarts with every
    /// byte). Kept to within a tenth of it (at most a second) by the shim's acceptor thread.
    public var headerTimeout: Duration
    /// At `maxConnections`, with connections waiting and none idle, a request whose line and headers have had no
    /// byte this long is closed to admit one, the longest stalled first: a flood trickling a byte every few seconds
    /// holds no slot a new client needs, and a client sending steadily, however slowly, is never chosen. Zero: never.
    public var headerStall: Duration
    /// Deadline of one async request's handling; past it the client gets 504.
    public var requestTimeout: Duration
    /// Largest accepted request body; larger ones get 413.
    public var maxBodyBytes: Int
    /// Async requests queued or running at once; past it new ones get 503.
    package var maxPendingRequests: Int
    /// MHD's per-connection memory pool: the request line and headers must fit, with the answer's status line and
    /// headers (`requestHeaderBudget`: 7 KiB of 8 KiB, where each header field counts 64 bytes; beyond it the shim
    /// answers 431, beyond the pool libmicrohttpd answers 414 or 431 itself). MHD zeroes the whole pool after
    /// every request and a fresh connection faults its pages in, so the size is CPU per request and per new
    /// connection: 8 KiB instead of MHD's 32 KiB default saves ~0.8 µs of ~10 µs per keep-alive request.
    package var connectionMemoryLimit: Int
    /// libmicrohttpd polling threads (epoll each; a connection stays on the one that accepted it). By default one
    /// per CPU the process may use (`availableProcessors()`, like nginx's `worker_processes auto`): the polling
    /// threads send a stampede's resumed answers, ~15 µs each, and on 2 CPUs one thread answered 1,000 waiters
    /// 22–27 ms after the upstream, two in 12–15 ms (medians, measured, with the shim's acceptor splitting
    /// connections evenly between them). The cost shows when the load generator
    /// shares the CPUs: wrk beside an unpinned server saw a 4.5 ms p99, against 0.9 ms with the server pinned to
    /// one CPU (so one thread, as bench-http.sh runs it) and wrk on the other.
    package var pollingThreads: Int
    /// How long a graceful shutdown waits for in-flight requests.
    package var shutdownTimeout: Duration
    /// Give every request an id (`X-Request-ID`: the client's when valid, else a generated one), pass it to the
    /// responder and echo it on every answer, the server's own (413, 503, 504) included.
    public var requestIDs: Bool
    /// HTTPS only (TLS 1.3 and 1.2, through libmicrohttpd and GnuTLS) with this certificate chain and key; `nil`: HTTP.
    public var tls: TLSCredentials?

    public init(
        host: String = "127.0.0.1",
        port: Int = 8080,
        maxConnections: Int = 4096,
        maxConnectionsPerIP: Int = 1024,
        idleTimeout: Duration = .seconds(30),
        headerTimeout: Duration = .seconds(10),
        headerStall: Duration = .seconds(1),
        requestTimeout: Duration = .seconds(30),
        maxBodyBytes: Int = 1 << 20,
        maxPendingRequests: Int = 4096,
        connectionMemoryLimit: Int = 8 << 10,
        shutdownTimeout: Duration = .seconds(10),
        pollingThreads: Int = MicroHTTPServerConfiguration.availableProcessors(),
        requestIDs: Bool = false,
        tls: TLSCredentials? = nil
    ) {
        self.host = host
        self.port = port
        self.maxConnections = maxConnections
        self.maxConnectionsPerIP = maxConnectionsPerIP
        self.idleTimeout = idleTimeout
        self.headerTimeout = headerTimeout
        self.headerStall = headerStall
        self.requestTimeout = requestTimeout
        self.maxBodyBytes = maxBodyBytes
        self.maxPendingRequests = maxPendingRequests
        self.connectionMemoryLimit = connectionMemoryLimit
        self.shutdownTimeout = shutdownTimeout
        self.pollingThreads = pollingThreads
        self.requestIDs = requestIDs
        self.tls = tls
    }
}

extension MicroHTTPServerConfiguration {
    /// The room of a connection's memory kept for an answer's status line and headers (libmicrohttpd builds them in
    /// the connection's pool): the largest the service sends, ~500 bytes with a 128-character request id, twice over.
    package static let answerHeadRoom = 1024

    /// What a request's line and headers may hold of a `memoryLimit`-byte connection pool (their bytes and 64 per
    /// header field and cookie): the rest is kept for the answer's head. More is answered 431 by the shim.
    package static func requestHeaderBudget(memoryLimit: Int) -> Int {
        max(0, memoryLimit - answerHeadRoom)
    }
}
