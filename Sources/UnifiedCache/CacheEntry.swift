import Foundation

/// One stored value with everything a tier needs to serve, expire or erase it.
///
/// Lifetimes are computed once, when the entry is stored, by the namespace's `FreshnessPolicy`:
/// `expiresAt` ends freshness, `staleUntil` ends the stale-if-error window (never before `expiresAt`).
public struct CacheEntry: Sendable, Equatable {
    public enum Kind: UInt8, Sendable, Equatable {
        /// A value fetched from an upstream or written by the raw API.
        case value = 0
        /// A remembered "not found" (negative caching); `body` is empty.
        case notFound = 1
    }

    public var key: String
    public var namespace: String
    /// The user the entry belongs to, for erasure; `nil` for raw entries.
    public var user: String?
    public var kind: Kind
    public var body: [UInt8]
    public var contentType: String
    /// Strong validator derived from the body's hash, quoted (`"…"`).
    public var etag: String
    public var storedAt: Date
    public var expiresAt: Date
    public var staleUntil: Date

    public init(
        key: String, namespace: String, user: String?, kind: Kind = .value,
        body: [UInt8], contentType: String, etag: String,
        storedAt: Date, expiresAt: Date, staleUntil: Date
    ) {
        self.key = key
        self.namespace = namespace
        self.user = user
        self.kind = kind
        self.body = body
        self.contentType = contentType
        self.etag = etag
        self.storedAt = storedAt
        self.expiresAt = expiresAt
        self.staleUntil = max(staleUntil, expiresAt)
    }

    package func isFresh(at now: Date) -> Bool { now < expiresAt }
    package func isServableStale(at now: Date) -> Bool { now < staleUntil }
    /// Whole seconds since the entry was stored.
    public func age(at now: Date) -> Int { max(0, Int(now.timeIntervalSince(storedAt))) }

    /// What listings and indexes need, without the body.
    public var metadata: CacheEntryMetadata {
        CacheEntryMetadata(
            key: key, namespace: namespace, user: user, kind: kind, bytes: body.count,
            storedAt: storedAt, expiresAt: expiresAt, staleUntil: staleUntil)
    }
}

/// An entry's description without its body.
public struct CacheEntryMetadata: Sendable, Equatable {
    public var key: String
    public var namespace: String
    public var user: String?
    public var kind: CacheEntry.Kind
    public var bytes: Int
    public var storedAt: Date
    public var expiresAt: Date
    public var staleUntil: Date
}
