import UnifiedCache

/// Budgets of the memory and disk tiers and TTL overrides (CONTRACT §1 and §3).
public struct CacheSettings: Sendable, Equatable {
    /// Memory tier byte budget (`--memory-limit`).
    public var memoryLimitBytes: Int
    /// Memory tier entry budget (`--memory-entries`).
    public var memoryEntries: Int
    /// Disk tier root, created if missing (`--data-dir`).
    public var dataDir: String
    /// Disk tier byte budget; `0` disables the disk tier (`--disk-limit`).
    public var diskLimitBytes: Int
    /// What the memory and disk tiers keep when full (`--eviction`, CONTRACT §12).
    public var eviction: EvictionKind
    /// TTL per namespace that replaces §3's table (`--ttl NAMESPACE=DURATION`); keys are from `namespaces`.
    public var ttlOverrides: [String: Duration]
    /// `--refresh-interval` (CONTRACT §15.1): a forced refresh of a copy fetched less than this long ago is a hit of
    /// it; zero never throttles.
    public var refreshInterval: Duration = .zero

    /// `false` when `--disk-limit 0` turned the disk tier off.
    public var diskTierEnabled: Bool { diskLimitBytes > 0 }

    /// The namespaces of CONTRACT §3 whose TTL `--ttl` may override, in the table's order.
    public static let namespaces: [String] = [
        "health.today", "health.averages", "health.metrics", "wellness", "scores", "activities", "streams",
        "subscription", "profile", "progress.history", "progress.streak", "progress.today", "progress.any",
    ]

    public init(
        memoryLimitBytes: Int = 64 * 1024 * 1024,
        memoryEntries: Int = 100_000,
        dataDir: String = "./.unicache",
        diskLimitBytes: Int = 1024 * 1024 * 1024,
        eviction: EvictionKind = .tinyLFU,
        ttlOverrides: [String: Duration] = [:]
    ) {
        self.eviction = eviction
        self.memoryLimitBytes = memoryLimitBytes
        self.memoryEntries = memoryEntries
        self.dataDir = dataDir
        self.diskLimitBytes = diskLimitBytes
        self.ttlOverrides = ttlOverrides
    }
}
