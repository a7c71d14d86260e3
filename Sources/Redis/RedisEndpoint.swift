/// Where Redis is and who connects (CONTRACT §6, §10): the link's one endpoint, parsed from the `--redis` URL
/// (`init(url:)`, `RedisEndpoint+URL`): one node (`redis://`, `rediss://`) or the Sentinels of a group
/// (`redis-sentinel://`); TLS or plain TCP; an ACL user (`AUTH user password`, §10.2) or the default one; the database.
/// `description` never shows a password.
public struct RedisEndpoint: Sendable, Hashable, CustomStringConvertible {
    /// What the URL names.
    public enum Target: Sendable, Hashable {
        /// One node.
        case node(Address)
        /// The Sentinels to ask, in order, for the primary of `masterName`; `password` is theirs (`sentinel-password=`),
        /// the endpoint's own user and password are the data nodes'.
        case sentinel(sentinels: [Address], masterName: String, password: String?)
        /// Nodes of a Redis Cluster to read the slot map from (`RedisClusterClient`), in order.
        case cluster(seeds: [Address])
    }

    public var target: Target
    /// TLS to every node (`rediss://`, or `?tls=true` on `redis-sentinel://`): how certificates are verified; nil:
    /// plain TCP.
    public var tls: RedisTLSOptions?
    /// The ACL user (Redis 6+); nil: the default user.
    public var user: String?
    public var password: String?
    /// `SELECT`ed on every new connection when not 0.
    public var database: Int

    public init(target: Target, tls: RedisTLSOptions? = nil, user: String? = nil, password: String? = nil, database: Int = 0) {
        self.target = target
        self.tls = tls
        self.user = user
        self.password = password
        self.database = database
    }

    /// The same user, password, TLS and database at the node `address`: a cluster's node, Sentinel's primary.
    public func node(at address: Address) -> RedisEndpoint {
        var node = self
        node.target = .node(address)
        return node
    }

    /// One node at `host:port`.
    public init(
        host: String, port: Int, user: String? = nil, password: String? = nil, database: Int = 0,
        tls: RedisTLSOptions? = nil
    ) {
        self.init(target: .node(Address(host: host, port: port)), tls: tls, user: user, password: password, database: database)
    }

    /// The node's address; a Sentinel group's first Sentinel (what is shown before a primary is known); a cluster's
    /// first seed.
    public var address: Address {
        switch target {
        case .node(let address): address
        case .sentinel(let sentinels, _, _): sentinels[0]
        case .cluster(let seeds): seeds[0]
        }
    }

    /// The Sentinels that are reached over plain TCP at an address that is not loopback: whoever answers there can
    /// name any primary (and so collect the data nodes' password). Empty with TLS (`?tls=true`) or without Sentinels.
    public var sentinelsTrustedUnauthenticated: [Address] {
        guard tls == nil, case .sentinel(let sentinels, _, _) = target else { return [] }
        return sentinels.filter { !$0.isLoopback }
    }

    /// Whether the process holds a secret for Redis: a password, a TLS client key or a Sentinel password.
    public var holdsSecrets: Bool {
        if password != nil || tls?.keyFile != nil { return true }
        if case .sentinel(_, _, _?) = target { return true }
        return false
    }

    /// The URL with every password replaced by `***`: what logs, `/stats` and errors may show (the user is named).
    public var description: String {
        let credentials =
            switch (user, password) {
            case (nil, nil): ""
            case (let user?, nil): "\(user)@"
            case (let user, _?): "\(user ?? ""):***@"
            }
        switch target {
        case .node(let address):
            return "\(tls == nil ? "redis" : "rediss")://\(credentials)\(address)/\(database)"
        case .sentinel(let sentinels, let masterName, let sentinelPassword):
            let list = sentinels.map(\.description).joined(separator: ",")
            let secret = sentinelPassword == nil ? "" : "&sentinel-password=***"
            return "redis-sentinel://\(credentials)\(list)/\(database)?master=\(masterName)\(secret)\(tls == nil ? "" : "&tls=true")"
        case .cluster(let seeds):
            let more = seeds.dropFirst().map { "addr=\($0)" }.joined(separator: "&")
            return "\(tls == nil ? "redis" : "rediss")://\(credentials)\(seeds[0])/0\(more.isEmpty ? "" : "?" + more)"
        }
    }

    /// The commands sent on every new connection: `AUTH`, `SELECT`; a `PING` when there is neither, so that a refused
    /// TLS handshake or a dead server shows at connect.
    var handshake: [RedisCommand] {
        var commands: [RedisCommand] = []
        if let password { commands.append(.auth(user: user, password: password)) }
        if database != 0 { commands.append(.select(database)) }
        return commands.isEmpty ? [.ping] : commands
    }
}
