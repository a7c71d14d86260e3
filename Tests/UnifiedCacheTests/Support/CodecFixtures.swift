import Foundation
import UnifiedCache

/// An entry with every field set, for the codec's tests.
func codecEntry(
    _ key: String, body: [UInt8]? = nil, namespace: String = "raw", user: String? = nil,
    storedAt: Date = Date(timeIntervalSinceReferenceDate: 800_000_000), ttl: TimeInterval = 3600
) -> CacheEntry {
    let body = body ?? Array("body of \(key)".utf8)
    return CacheEntry(
        key: key, namespace: namespace, user: user, body: body, contentType: "application/json",
        etag: "\"etag-\(key)\"", storedAt: storedAt, expiresAt: storedAt + ttl, staleUntil: storedAt + ttl)
}
