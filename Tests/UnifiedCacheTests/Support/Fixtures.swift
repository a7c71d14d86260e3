import Foundation
import Logging
import TestSupport
@testable import UnifiedCache

/// Parses an ISO 8601 instant for fixtures (test input is always valid).
func instant(_ text: String) -> Date {
    (try? Date(text, strategy: .iso8601)) ?? Date(timeIntervalSince1970: 0)
}

func zone(_ identifier: String) -> TimeZone {
    TimeZone(identifier: identifier) ?? TimeZone(secondsFromGMT: 0)!  // UTC always exists
}

func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

func text(_ entry: CacheEntry) -> String { String(decoding: entry.body, as: UTF8.self) }

func request(_ key: String, namespace: String = "test", user: String? = "alice") -> FetchRequest {
    FetchRequest(key: key, namespace: namespace, user: user, path: "/users/alice/\(key)")
}

func makeManager(
    clock: ManualWallClock = ManualWallClock(instant("2026-06-01T12:00:00Z")), ticker: ManualClock = ManualClock(),
    maxBytes: Int = 1 << 20, maxEntries: Int = 1000, secondTier: (any SecondTier)? = nil
) -> UnifiedCacheManager {
    UnifiedCacheManager(
        configuration: MemoryTierConfiguration(maxBytes: maxBytes, maxEntries: maxEntries),
        secondTier: secondTier, clock: clock, ticker: ticker, logger: quietLogger())
}

func entry(
    _ key: String, body: String = "v", namespace: String = "test", user: String? = "alice",
    storedAt: Date = instant("2026-06-01T12:00:00Z"), ttl: TimeInterval = 60, stale: TimeInterval = 0
) -> CacheEntry {
    CacheEntry(
        key: key, namespace: namespace, user: user, body: bytes(body), contentType: "application/json",
        etag: ETag.make(for: bytes(body)), storedAt: storedAt, expiresAt: storedAt.addingTimeInterval(ttl),
        staleUntil: storedAt.addingTimeInterval(ttl + stale))
}

/// A logger that drops everything, so test output stays readable.
func quietLogger() -> Logger {
    Logger(label: "test", factory: { _ in SwiftLogNoOpLogHandler() })
}

extension UnifiedCacheManager {
    /// What `look` has ready for `key` without joining anything (a fresh value from memory or the second tier,
    /// counted), else nil.
    func ready(
        _ key: String, policy: FreshnessPolicy, refusal: ((_ namespace: String) -> UpstreamRefusal?)? = nil
    ) -> CacheResult? {
        guard case .ready(let result) = look(request(key), policy: policy, refusal: refusal, joining: false)
        else { return nil }
        return result
    }

    /// `look` for `request`, joining by callback what is under way, as the HTTP side does: false, and `answer` never
    /// called, when the look is not `.pending`.
    func join(
        _ request: FetchRequest, policy: FreshnessPolicy = .ttl(.seconds(60)),
        answer: @escaping @Sendable (Result<CacheResult, CacheError>?) -> Void
    ) -> Bool {
        guard case .pending(let read) = look(request, policy: policy) else { return false }
        read.whenDone(answer)
        return true
    }
}
