import HTTPRouting
import UnifiedCache

/// The answer of an operation that promises a fleet-wide effect while the shared tier cannot be asked
/// (CONTRACT §6.5): 503 with `Retry-After`; the local part is done, and retrying is safe.
enum FleetProblem {
    /// `outcome`: what happened here instead (a sentence without its full stop).
    static func problem(_ unavailable: SharedTierUnavailable, outcome: String) -> Problem {
        Problem.serviceUnavailable(
            detail: "The shared tier (Redis) cannot be reached (\(unavailable.reason)), so the other instances would not see this change. \(outcome); retry after \(unavailable.retryAfterSeconds) s (the operation is idempotent).",
            retryAfterSeconds: unavailable.retryAfterSeconds, type: Problem.typeURI("shared-tier-unavailable"))
    }

    /// Runs a fleet-wide operation; a shared tier that cannot be asked becomes the 503 above.
    static func map<T>(_ body: () async throws(SharedTierUnavailable) -> T) async throws(Problem) -> T {
        do { return try await body() } catch {
            throw problem(error, outcome: "It was applied to this instance's own tiers only")
        }
    }
}
