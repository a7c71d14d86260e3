import ArgumentParser

/// The flags of `unicache serve` (CONTRACT §1), as given: every value stays text here and is checked by
/// `configuration(environment:)`, so a bad value gets a one-line error naming the flag and the accepted form.
public struct ServeOptions: ParsableArguments, Sendable {
    @Option(name: .customLong("host"), help: ArgumentHelp("Bind address (env UNICACHE_HOST, default 127.0.0.1).", valueName: "address"))
    public var host: String?

    @Option(name: .customLong("port"), help: ArgumentHelp("Port; 0 picks a free one (env UNICACHE_PORT, default 8080).", valueName: "port"))
    public var port: String?

    @Option(name: .customLong("data-dir"), help: ArgumentHelp("Disk tier root, created if missing (env UNICACHE_DATA_DIR, default ./.unicache).", valueName: "path"))
    public var dataDir: String?

    @Option(name: .customLong("memory-limit"), help: ArgumentHelp("Memory tier byte budget: B, KiB, MiB, GiB (env UNICACHE_MEMORY_LIMIT, default 64MiB).", valueName: "size"))
    public var memoryLimit: String?

    @Option(name: .customLong("memory-entries"), help: ArgumentHelp("Memory tier entry budget (env UNICACHE_MEMORY_ENTRIES, default 100000).", valueName: "count"))
    public var memoryEntries: String?

    @Option(name: .customLong("disk-limit"), help: ArgumentHelp("Disk tier byte budget; 0 disables the disk tier (env UNICACHE_DISK_LIMIT, default 1GiB).", valueName: "size"))
    package var diskLimit: String?

    @Option(name: .customLong("eviction"), help: ArgumentHelp("What the memory and disk tiers keep when full: tinylfu (admission by frequency, an adaptive window) or lru (env UNICACHE_EVICTION, default tinylfu).", valueName: "policy"))
    public var eviction: String?

    @Option(
        name: .customLong("upstream"),
        help: ArgumentHelp(
            "Real HTTP upstream of a domain: health, activities, subscription, progress; repeatable (env UNICACHE_UPSTREAM_<DOMAIN>).",
            valueName: "domain=url"))
    public var upstreams: [String] = []

    @Option(
        name: .customLong("upstream-rate"),
        help: ArgumentHelp(
            "At most N requests to a domain's upstream in any window of DURATION, e.g. activities=200/15m; repeatable (env UNICACHE_UPSTREAM_RATE_<DOMAIN>, default none).",
            valueName: "domain=N/duration"))
    package var upstreamRates: [String] = []

    @Option(
        name: .customLong("upstream-concurrency"),
        help: ArgumentHelp(
            "At most N requests in flight to a domain's upstream; repeatable (env UNICACHE_UPSTREAM_CONCURRENCY_<DOMAIN>, default 64).",
            valueName: "domain=N"))
    package var upstreamConcurrency: [String] = []

    @Option(
        name: .customLong("upstream-header"),
        help: ArgumentHelp(
            "A header sent with every request to a domain's upstream (a service credential, never logged); repeatable (env UNICACHE_UPSTREAM_HEADER_<DOMAIN>).",
            valueName: "domain=name:value"))
    package var upstreamHeaders: [String] = []

    @Option(
        name: .customLong("upstream-path"),
        help: ArgumentHelp(
            "The path and query a namespace's fetch asks its upstream for, with placeholders {user} {days} {types} {date} {metric} {weekday} {id} {tz}, e.g. activities=/api/v3/athletes/{user}/activities?days={days}&types={types}; it must name every placeholder of the namespace's cache key; repeatable (env UNICACHE_UPSTREAM_PATH_<NAMESPACE>, . as _).",
            valueName: "namespace=template"))
    package var upstreamPaths: [String] = []

    @Option(
        name: .customLong("demo"),
        help: ArgumentHelp(
            "Domains the demo fetchers serve with invented data: all, none, or a list such as health,progress (env UNICACHE_DEMO, default all without --upstream, else none).",
            valueName: "domains"))
    public var demo: String?

    @Option(
        name: .customLong("upstream-user-share"),
        help: ArgumentHelp(
            "The most of each domain's --upstream-rate window and of its --upstream-concurrency that one user's fetches may take, 1–100 (env UNICACHE_UPSTREAM_USER_SHARE, default 10).",
            valueName: "percent"))
    package var upstreamUserShare: String?

    @Option(
        name: .customLong("refresh-interval"),
        help: ArgumentHelp(
            "A forced refresh (?refresh=true, Cache-Control: no-cache) of a copy fetched less than this long ago is answered from it; 0s never (env UNICACHE_REFRESH_INTERVAL, default 0s).",
            valueName: "duration"))
    public var refreshInterval: String?

    @Option(name: .customLong("upstream-timeout"), help: ArgumentHelp("Per upstream request: ms, s, m, h, d (env UNICACHE_UPSTREAM_TIMEOUT, default 5s).", valueName: "duration"))
    package var upstreamTimeout: String?

    @Option(name: .customLong("demo-latency"), help: ArgumentHelp("Simulated latency of the demo fetchers (env UNICACHE_DEMO_LATENCY, default 200ms).", valueName: "duration"))
    public var demoLatency: String?

    @Option(name: .customLong("admin-token"), help: ArgumentHelp("Bearer token of the admin endpoints (env UNICACHE_ADMIN_TOKEN, default none: they answer 403).", valueName: "token"))
    public var adminToken: String?

    @Option(name: .customLong("admin-token-file"), help: ArgumentHelp("A file holding the admin token (mode 600 or 400; one trailing newline is not part of it), so that it stays off the command line; not with --admin-token (env UNICACHE_ADMIN_TOKEN_FILE).", valueName: "file"))
    package var adminTokenFile: String?

    /// `--auth` and the `--jwt-*` flags (CONTRACT §8).
    @OptionGroup public var access: AccessOptions

    @Option(
        name: .customLong("ttl"),
        help: ArgumentHelp("Override a namespace's TTL, e.g. wellness=10m; repeatable.", valueName: "namespace=duration"))
    package var ttls: [String] = []

    @Option(name: .customLong("max-connections"), help: ArgumentHelp("Open connections at once (env UNICACHE_MAX_CONNECTIONS, default 4096).", valueName: "count"))
    public var maxConnections: String?

    @Option(name: .customLong("max-connections-per-ip"), help: ArgumentHelp("Open connections per client address (env UNICACHE_MAX_CONNECTIONS_PER_IP, default 1024).", valueName: "count"))
    public var maxConnectionsPerIP: String?

    @Option(name: .customLong("idle-timeout"), help: ArgumentHelp("Close a connection idle this long (env UNICACHE_IDLE_TIMEOUT, default 30s).", valueName: "duration"))
    public var idleTimeout: String?

    @Option(name: .customLong("header-timeout"), help: ArgumentHelp("Close a connection whose request line and headers are not complete this long after its first byte (env UNICACHE_HEADER_TIMEOUT, default 10s).", valueName: "duration"))
    public var headerTimeout: String?

    @Option(name: .customLong("header-stall"), help: ArgumentHelp("At --max-connections with none idle, close the request whose line and headers have had no byte this long, the longest stalled first, to admit a waiting connection; 0s never (env UNICACHE_HEADER_STALL, default 1s).", valueName: "duration"))
    public var headerStall: String?

    @Option(name: .customLong("request-timeout"), help: ArgumentHelp("Deadline of one request's handling, then 504 (env UNICACHE_REQUEST_TIMEOUT, default 30s).", valueName: "duration"))
    public var requestTimeout: String?

    @Option(name: .customLong("tls-cert"), help: ArgumentHelp("PEM certificate chain: the port speaks HTTPS only, TLS 1.2 and 1.3; needs --tls-key (env UNICACHE_TLS_CERT, default none: HTTP).", valueName: "file"))
    package var tlsCert: String?

    @Option(name: .customLong("tls-key"), help: ArgumentHelp("PEM private key of --tls-cert, unencrypted, never logged (env UNICACHE_TLS_KEY, default none).", valueName: "file"))
    package var tlsKey: String?

    @Option(name: .customLong("redis"), help: ArgumentHelp("Shared tier: redis://[[user]:password@]host[:port][/db], rediss://… for TLS, or redis-sentinel://HOST[:PORT][,…][/db]?master=NAME (a user: AUTH as that ACL user); instances naming the same Redis and prefix form one fleet (env UNICACHE_REDIS, default none).", valueName: "url"))
    public var redis: String?

    @Flag(
        name: .customLong("redis-cluster"),
        help: ArgumentHelp(
            "--redis names a seed node of a Redis Cluster (redis:// or rediss://, more seeds as ?addr=HOST:PORT&addr=…); the instance reads the slot map and shards the fleet's keys over the cluster (env UNICACHE_REDIS_CLUSTER=true)."))
    package var redisCluster = false

    @Option(name: .customLong("redis-password-file"), help: ArgumentHelp("A file holding the Redis password (mode 600 or 400; one trailing newline is not part of it), so that it stays off the command line; not with a password in --redis (env UNICACHE_REDIS_PASSWORD_FILE).", valueName: "file"))
    package var redisPasswordFile: String?

    @Option(name: .customLong("redis-timeout"), help: ArgumentHelp("Bound of one Redis command (env UNICACHE_REDIS_TIMEOUT, default 50ms).", valueName: "duration"))
    package var redisTimeout: String?

    @Option(name: .customLong("redis-prefix"), help: ArgumentHelp("Prefix of every Redis key and channel (env UNICACHE_REDIS_PREFIX, default unicache:).", valueName: "prefix"))
    package var redisPrefix: String?

    @Option(name: .customLong("redis-tls-ca"), help: ArgumentHelp("With rediss://: PEM CA bundle verifying Redis's certificate (env UNICACHE_REDIS_TLS_CA, default the system's trust store).", valueName: "file"))
    package var redisTLSCA: String?

    @Option(name: .customLong("redis-tls-server-name"), help: ArgumentHelp("With rediss://: the name sent (SNI) and verified in Redis's certificate (env UNICACHE_REDIS_TLS_SERVER_NAME, default the URL's host).", valueName: "name"))
    package var redisTLSServerName: String?

    @Option(name: .customLong("redis-tls-cert"), help: ArgumentHelp("With rediss://: PEM client certificate for Redis's tls-auth-clients; needs --redis-tls-key (env UNICACHE_REDIS_TLS_CERT, default none).", valueName: "file"))
    package var redisTLSCert: String?

    @Option(name: .customLong("redis-tls-key"), help: ArgumentHelp("PEM private key of --redis-tls-cert, mode 600 or 400, never logged (env UNICACHE_REDIS_TLS_KEY, default none).", valueName: "file"))
    package var redisTLSKey: String?

    @Option(name: .customLong("log-level"), help: ArgumentHelp("trace, debug, info, notice, warning, error, critical (env UNICACHE_LOG_LEVEL, default info).", valueName: "level"))
    public var logLevel: String?

    @Option(name: .customLong("log-format"), help: ArgumentHelp("text, or json: one JSON object per line (env UNICACHE_LOG_FORMAT, default text).", valueName: "format"))
    package var logFormat: String?

    @Option(
        name: .customLong("encryption-keys"),
        help: ArgumentHelp(
            "Key ring sealing every value on disk and in Redis with AES-256-GCM: ID:BASE64 lines, the first the primary; mode 600 (env UNICACHE_ENCRYPTION_KEYS, default none).",
            valueName: "file"))
    package var encryptionKeys: String?

    @Flag(
        name: .customLong("encryption-migrate"),
        help: ArgumentHelp(
            "With --encryption-keys, still read values stored in the clear and let POST /v1/admin/rekey seal them; without it they are refused as forgeable (env UNICACHE_ENCRYPTION_MIGRATE=true)."))
    package var encryptionMigrate = false

    public init() {}
}
