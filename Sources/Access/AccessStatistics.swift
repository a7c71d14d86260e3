import Synchronization

/// The `auth.*` counters of `/stats` (CONTRACT §8.8): one atomic add per decided request.
final class AccessStatistics: Sendable {
    let allowed = Atomic<Int>(0)
    let missing = Atomic<Int>(0)
    let invalid = Atomic<Int>(0)
    let expired = Atomic<Int>(0)
    let forbidden = Atomic<Int>(0)
    let protected = Atomic<Int>(0)
    let keyRefreshes = Atomic<Int>(0)
    let keyErrors = Atomic<Int>(0)
    /// Tokens verified rather than found remembered (not in /stats: for tests and benchmarks).
    let signatureChecks = Atomic<Int>(0)

    func deny(_ reason: DenialReason) {
        switch reason {
        case .missing: missing.add(1, ordering: .relaxed)
        case .invalid: invalid.add(1, ordering: .relaxed)
        case .expired: expired.add(1, ordering: .relaxed)
        case .forbidden: forbidden.add(1, ordering: .relaxed)
        case .protected: protected.add(1, ordering: .relaxed)
        }
    }

    func denied(_ reason: DenialReason) -> Int {
        switch reason {
        case .missing: missing.load(ordering: .relaxed)
        case .invalid: invalid.load(ordering: .relaxed)
        case .expired: expired.load(ordering: .relaxed)
        case .forbidden: forbidden.load(ordering: .relaxed)
        case .protected: protected.load(ordering: .relaxed)
        }
    }
}

/// A snapshot of the access counters, for `/stats` and the Prometheus exposition.
public struct AccessSnapshot: Sendable, Equatable {
    public let mode: AccessSettings.Mode
    public let allowed: Int
    /// By reason, every reason present.
    public let denied: [DenialReason: Int]
    /// Usable keys held (0 without `--auth jwt`).
    public let keys: Int
    public let keyRefreshes: Int
    public let keyErrors: Int
}
