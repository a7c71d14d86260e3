import Access
import Foundation
import HTTPRouting
import Settings
import UnifiedCache

/// Events, user erasure and averages warm-up (CONTRACT §4), and rekey (§9.3).
struct AdminRoutes: Sendable {
    let auth: AdminAuth
    let cache: UnifiedCacheManager
    let readThrough: ReadThrough
    let encryption: EncryptionStatus
    /// Whether the health domain has a source (an upstream or the demo); without one the warm-up answers 503
    /// `no-upstream`, as the health routes do (CONTRACT §11.1).
    let servesHealth: Bool

    func register(in router: inout Router) {
        auth.register(
            [
                (.post, "/v1/users/{user}/events", events), (.delete, "/v1/users/{user}", erase),
                (.post, "/v1/users/{user}/health/averages/warm", warm), (.post, "/v1/admin/rekey", rekey),
            ], in: &router)
    }

    func events(_ request: Request) async throws(Problem) -> Response {
        let user = try Self.user(request)
        // A member named twice (`{"type": "a", "type": "b"}`) has no one reading (RFC 8259 section 4): refused, as a
        // token's repeated claim is, rather than acting on whichever of the two a parser keeps.
        guard !DuplicateMembers.found(in: request.body),
            let object = try? JSONSerialization.jsonObject(with: Data(request.body)) as? [String: Any],
            let type = object["type"] as? String
        else {
            throw Problem.badRequest(
                detail: #"The body must be a JSON object {"type": "..."} that names each member once, "#
                    + "nested at most 32 deep.",
                type: Problem.typeURI("invalid-body"))
        }
        guard let namespaces = EventRules.namespaces(for: type) else {
            // The type is named back only when it is short: a body of up to 1 MiB must not come back whole.
            let named = type.utf8.count <= 64 ? " \"\(type)\"" : ""
            throw Problem.badRequest(
                detail: "Unknown event type\(named); known types: \(EventRules.knownTypes.joined(separator: ", ")).",
                type: Problem.typeURI("unknown-event"), members: [Problem.Member("knownTypes", .strings(EventRules.knownTypes))])
        }
        let count = try await FleetProblem.map { () throws(InvalidationIncomplete) in
            try await cache.invalidate(namespaces: namespaces, user: user)
        }
        return .json(#"{"invalidated":\#(count)}"#)
    }

    func erase(_ request: Request) async throws(Problem) -> Response {
        let user = try Self.user(request)
        let count = try await FleetProblem.map { () throws(InvalidationIncomplete) in
            try await cache.erase(user: user)
        }
        return .json(#"{"erased":\#(count)}"#)
    }

    /// Fetches and stores the seven weekday averages (deduplicated with any fetch in flight), as background work:
    /// it yields to requests at the upstream gate and never spends the last tenth of a budget (CONTRACT §7.1).
    func warm(_ request: Request) async throws(Problem) -> Response {
        guard servesHealth else { throw NoUpstream.problem(.health) }
        let resolved = try readThrough.resolve(request) { c throws(InputError) in
            try (1...7).map { weekday throws(InputError) in
                var item = try ResourceTable.averages(c, weekday: weekday)
                item.fetch.background = true
                return item
            }
        }
        let failures = await withTaskGroup(of: (Int, Problem)?.self) { group in
            for (index, item) in resolved.enumerated() {
                group.addTask {
                    do throws(Problem) {
                        _ = try await readThrough.get(item, domain: .health, control: .normal)
                        return nil
                    } catch {
                        // The upstream has no average for that weekday: its "not found" is what is now kept.
                        return error.status == 404 ? nil : (index, error)
                    }
                }
            }
            var failures: [(Int, Problem)] = []
            for await failure in group { if let failure { failures.append(failure) } }
            return failures.sorted { $0.0 < $1.0 }
        }
        if let (_, first) = failures.first {
            // The earliest weekday's problem (its status and Retry-After), told that the others are stored.
            let failed = failures.map { resolved[$0.0].key }
            var problem = first
            problem.detail = "\(failed.count) of 7 weekdays could not be warmed (\(failed.joined(separator: ", "))); "
                + "the others are stored. \(first.detail)"
            problem.members.append(Problem.Member("failed", .strings(failed)))
            throw problem
        }
        let keys = resolved.map { "\"\($0.key)\"" }.joined(separator: ",")
        return .json(#"{"keys":[\#(keys)]}"#)
    }

    /// `POST /v1/admin/rekey` (CONTRACT §9.3): re-seals under the primary key every disk and shared entry that is not.
    ///
    /// The disk tier is done first. When the shared tier cannot be asked (or stops answering half-way), the answer is
    /// §6.5's: 503 problem+json with `Retry-After`, whose detail says what the disk part did; retrying is safe (entries
    /// already under the primary count as current).
    func rekey(_ request: Request) async throws(Problem) -> Response {
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

    static func user(_ request: Request) throws(Problem) -> String {
        do { return try InputValidation.user(request.pathParameters["user"] ?? "") } catch {
            throw Problem.invalidInput(error)
        }
    }
}
