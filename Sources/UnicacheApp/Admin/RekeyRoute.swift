import HTTPRouting
import UnifiedCache

/// `POST /v1/admin/rekey` (CONTRACT §9.3): re-seals under the primary key every disk and shared entry that is not.
///
/// The disk tier is done first. When the shared tier cannot be asked (or stops answering half-way), the answer is
/// §6.5's: 503 problem+json with `Retry-After`, whose detail says what the disk part did; retrying is safe (entries
/// already under the primary count as current).
struct RekeyRoute: Sendable {
    let auth: AdminAuth
    let cache: UnifiedCacheManager
    let encryption: EncryptionStatus

    func register(in router: inout Router) {
        router.post("/v1/admin/rekey") { request in try await rekey(request) }
    }

    func rekey(_ request: Request) async throws(Problem) -> Response {
        try auth.check(request)
        guard encryption.enabled else {
            throw Problem(
                type: Problem.typeURI("encryption-disabled"), status: 409,
                detail: "No key ring: values are stored in the clear. Start unicache with --encryption-keys FILE (or UNICACHE_ENCRYPTION_KEYS) to seal them.")
        }
        let local = await cache.rekeyLocal()
        let shared: RekeyReport
        do throws(SharedTierUnavailable) { shared = try await cache.rekeyShared() } catch {
            throw FleetProblem.problem(
                error,
                outcome: "This instance's disk tier was rekeyed (\(local.rekeyed) re-sealed, \(local.current) current, \(local.undecryptable) deleted), the shared tier not")
        }
        let total = local + shared
        return .json(#"{"rekeyed":\#(total.rekeyed),"current":\#(total.current),"undecryptable":\#(total.undecryptable)}"#)
    }
}
