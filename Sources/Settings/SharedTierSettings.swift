import Redis

/// The fleet's shared Redis tier (CONTRACT §6); no `redis`, no shared tier.
public struct SharedTierSettings: Sendable, Equatable {
    /// `--redis URL`; its password is shown nowhere (`RedisEndpoint.description` hides it).
    public var redis: RedisEndpoint?
    /// `--redis-timeout`: the bound of one Redis command.
    public var timeout: Duration
    /// `--redis-prefix`: of every Redis key and channel.
    public var prefix: String

    public init(redis: RedisEndpoint? = nil, timeout: Duration = .milliseconds(50), prefix: String = "unicache:") {
        self.redis = redis
        self.timeout = timeout
        self.prefix = prefix
    }
}
