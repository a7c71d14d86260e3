import Access
import Clocks
import Foundation
import HTTPRouting
import OpenAPISpec
import Settings
import UnifiedCache

/// `/healthz`, `/readyz`, `/stats`, `/metrics`, `/openapi.yaml` (CONTRACT §5).
struct OperationsRoutes: Sendable {
    let cache: UnifiedCacheManager
    let metrics: ServiceMetrics
    let gates: UpstreamGates
    /// Monotonic time since the routes were built: the uptime.
    let elapsed: Elapsed
    /// `auth.*` of /stats; `nil` (no gate) shows protected mode's zeros.
    var access: AccessControl? = nil
    var encryption = EncryptionStatus()
    /// `version` and `upstreams.DOMAIN.source` of /stats.
    var facts = ServiceFacts()

    static let exposition = "text/plain; version=0.0.4; charset=utf-8"

    func register(in router: inout Router) {
        let healthy = Response.json(#"{"status":"ok"}"#).reusable()
        router.handle(.get, "/healthz") { _ in .now(healthy) }
        router.get("/readyz") { _ in try await readiness() }
        router.get("/stats") { request in await stats(request) }
        router.get("/metrics") { _ in await prometheus() }
        let openapi = Response(
            status: 200, headers: ["Content-Type": "application/yaml"], body: Array(OpenAPIDocument.yaml.utf8)).reusable()
        router.handle(.get, "/openapi.yaml") { _ in .now(openapi) }
    }

    func readiness() async throws(Problem) -> Response {
        if let reason = await cache.checkedHealth() {
            throw Problem.serviceUnavailable(detail: reason, type: Problem.typeURI("not-ready"))
        }
        // A dead Redis must not take the fleet out of its load balancer (CONTRACT §6.5): named, still 200.
        guard let shared = cache.statistics().shared else { return .json(#"{"status":"ready"}"#) }
        let state = shared.connected ? "connected" : "unreachable"
        return .json(#"{"status":"ready","sharedTier":"\#(state)"}"#)
    }

    /// JSON, or the Prometheus exposition when `Accept` prefers it: either way `Vary: Accept`, so that a cache in
    /// front keeps the two apart (RFC 9110 section 12.5.5).
    func stats(_ request: Request) async -> Response {
        var response = await statsDocument(request)
        response.headers.add(name: "Vary", value: "Accept")
        return response
    }

    private func statsDocument(_ request: Request) async -> Response {
        if Self.prefersExposition(request.headers["Accept"]) { return await prometheus() }
        let uptime = elapsed.now()
        var document = StatsDocument(
            cache.statistics(), gates: await gates.snapshots(), uptimeSeconds: Int(uptime.wholeSeconds),
            encryption: encryption)
        document.auth = StatsDocument.Auth(access?.snapshot)
        document.version = facts.version
        document.upstreams = Dictionary(
            uniqueKeysWithValues: facts.sources.map { ($0.key.rawValue, StatsDocument.Source(source: $0.value.description)) })
        return .json(document.encoded())
    }

    func prometheus() async -> Response {
        let snapshot = access?.snapshot
        metrics.carry(snapshot)
        metrics.carryKeys(snapshot)
        let statistics = cache.statistics()
        let gates = await gates.snapshots()
        metrics.carryOperator(statistics, gates: gates)
        let body = metrics.exposition(statistics, gates: gates)
        return Response(status: 200, headers: ["Content-Type": Self.exposition], body: body)
    }

    /// True when `Accept` ranks text/plain or OpenMetrics above JSON, as a Prometheus scrape does.
    static func prefersExposition(_ accept: String?) -> Bool {
        guard let accept else { return false }
        var json = 0.0
        var text = 0.0
        for range in accept.split(separator: ",") {
            let parts = range.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
            guard let type = parts.first else { continue }
            let q = parts.dropFirst().first { $0.hasPrefix("q=") }.flatMap { Double($0.dropFirst(2)) } ?? 1
            switch type {
            case "application/json", "application/*": json = max(json, q)
            case "text/plain", "text/*", "application/openmetrics-text": text = max(text, q)
            case "*/*":
                json = max(json, q)
                text = max(text, q)
            default: break
            }
        }
        return text > json
    }
}
