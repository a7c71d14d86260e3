import HTTPRouting
import UnifiedCache

/// The answer of an operation that promises a fleet-wide effect when the shared tier did not take it (it cannot be
/// asked, or Redis refused the command: an ACL user's rules, say) (CONTRACT §6.5): 503 with `Retry-After`; the local
/// part is done, and retrying is safe.
enum FleetProblem {
    /// `outcome`: what happened here instead (a sentence without its full stop).
    static func problem(_ unavailable: SharedTierUnavailable, outcome: String) -> Problem {
        Problem.serviceUnavailable(
            detail: "The shared tier (Redis) did not take this change (\(unavailable.reason)), so the other instances would not see it. \(outcome); retry after \(unavailable.retryAfterSeconds) s (the operation is idempotent).",
            retryAfterSeconds: unavailable.retryAfterSeconds, type: Problem.typeURI("shared-tier-unavailable"))
    }

    /// Runs an invalidation or erasure: a file the disk tier could not delete, or a shared tier that cannot be asked,
    /// becomes a 503 (the disk's first: what stays stored here matters more than who was not told).
    static func map<T>(_ body: () async throws(InvalidationIncomplete) -> T) async throws(Problem) -> T {
        do { return try await body() } catch {
            switch error {
            case .secondTier(let reason, let shared):
                let fleet = shared.map { " Nor did the shared tier (Redis) take it (\($0.reason))." } ?? ""
                throw Problem.serviceUnavailable(
                    detail: "The disk tier could not delete what it holds of this (\(reason)): the rest was "
                        + "removed, and this instance no longer serves it, but its files stay and a restart would find "
                        + "them.\(fleet) Retry once the data dir is writable (the operation is idempotent).",
                    type: Problem.typeURI("not-removed"))
            case .shared(let unavailable):
                throw problem(unavailable, outcome: "It was applied to this instance's own tiers only")
            }
        }
    }
}
