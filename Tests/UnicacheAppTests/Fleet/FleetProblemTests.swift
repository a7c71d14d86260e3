import HTTPRouting
import Testing
import UnifiedCache

@testable import UnicacheApp

/// The 503 of a fleet change the shared tier did not take: said as that, whether Redis could not be reached or
/// answered and refused, beside the disk's own failure too.
struct FleetProblemTests {
    static let refused = SharedTierUnavailable(
        reason: "Redis answered ERR (the user's ACL rules do not allow the command, key or channel) to store",
        retryAfterSeconds: 2)

    @Test func aChangeTheSharedTierDidNotTakeIsSaidSo() {
        let problem = FleetProblem.problem(Self.refused, outcome: "Nothing is stored under this key")
        #expect(problem.status == 503)
        #expect(problem.detail.hasPrefix("The shared tier (Redis) did not take this change (Redis answered ERR"))
        #expect(problem.detail.contains("retry after 2 s"))
        #expect(!problem.detail.contains("reached"), "\(problem.detail)")
    }

    @Test func theDisksFailureSaysTheSharedTierDidNotTakeItEither() async {
        do {
            _ = try await FleetProblem.map { () async throws(InvalidationIncomplete) -> Int in
                throw .secondTier("read-only file system", shared: Self.refused)
            }
            Issue.record("no problem thrown")
        } catch {
            #expect(error.type.hasSuffix("not-removed"))
            #expect(error.detail.contains("Nor did the shared tier (Redis) take it (Redis answered ERR"), "\(error.detail)")
            #expect(!error.detail.contains("reached"), "\(error.detail)")
        }
    }
}
