import HTTPRouting
import UnifiedCache

/// The answer of an operation that promises a fleet-wide effect while the shared tier cannot be asked
/// (CONTRACT §6.5): 503 with `Retry-After`; the local part is done, and retrying is safe.
enum FleetProblem {
    static func problem(_ unavailable: SharedTierUnavailable, action: String) -> Problem {
        Problem.serviceUnavailable(
            detail: "\(action): the shared tier (Redis) cannot be reached (\(unavailable.reason)), so the other instances would not see this change. This instance's own tiers are updated; retry after \(unavailable.retryAfterSeconds) s (the operation is idempotent).",
            retryAfterSeconds: unavailable.retryAfterSeconds, type: Problem.typeURI("shared-tier-unavailable"))
    }

    /// Runs a fleet-wide operation; a shared tier that cannot be asked becomes the 503 above.
    static func map<T>(
        action: String = "Applied here only", _ body: () async throws(SharedTierUnavailable) -> T
    ) async throws(Problem) -> T {
        do { return try await body() } catch { throw problem(error, action: action) }
    }
}
