import Foundation

/// One row of `UnifiedCacheManager.list(prefix:limit:)`.
public struct EntryListing: Sendable, Equatable {
    public var key: String
    public var namespace: String
    public var bytes: Int
    public var tier: CacheTier
    public var storedAt: Date
    public var expiresAt: Date

    public init(key: String, namespace: String, bytes: Int, tier: CacheTier, storedAt: Date, expiresAt: Date) {
        self.key = key
        self.namespace = namespace
        self.bytes = bytes
        self.tier = tier
        self.storedAt = storedAt
        self.expiresAt = expiresAt
    }
}
