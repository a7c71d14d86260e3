import Access
import Foundation
import HTTPRouting
import Logging
import UnifiedCache
import UpstreamGate

/// The assembled application: the router with every route of the contract over one cache.
/// Tests build it directly (`App.build`) and drive it in-process or behind a live server.
public struct App: Sendable {
    public let router: Router
    public let cache: UnifiedCacheManager
    let metrics: ServiceMetrics
    let gates: UpstreamGates
    /// Who may read what (CONTRACT §8); `nil` when built without one (every request admitted).
    public let access: AccessControl?
}

extension App {
    /// - Parameters:
    ///   - fetcher: the fetcher for each domain (demo or HTTP upstream); each is timed into the fetch histogram. A
    ///     domain without one (`nil`) answers its routes 503 `no-upstream` (CONTRACT §11.1).
    ///   - ttlOverrides: `--ttl NAMESPACE=DURATION`.
    ///   - adminToken: `--admin-token`; `nil` disables the admin endpoints (403).
    ///   - protection: each domain's budget and cap (CONTRACT §7); every domain has a circuit breaker.
    ///   - slotWait: how long a fetch waits for a slot under its domain's cap (the upstream timeout).
    ///   - gateClock: the upstream gates' clock.
    ///   - rateCounter: builds each budget's counter (fleet-wide with `--redis`); local sliding logs without.
    ///   - access: who may read what (CONTRACT §8), asked before anything else; `nil` admits every request.
    ///   - encryption: whether the tiers below memory seal what they store, and the primary key's ID (CONTRACT §9).
    ///   - facts: the version and each domain's source, for `/stats`.
    public static func build(
        cache: UnifiedCacheManager, fetcher: (UpstreamDomain) -> (any Fetcher)?, clock: any WallClock = SystemWallClock(),
        ttlOverrides: [String: Duration] = [:], adminToken: String?, logger: Logger,
        protection: [UpstreamDomain: UpstreamProtection] = [:], slotWait: Duration = .seconds(5),
        gateClock: any GateClock = SystemGateClock(), rateCounter: RateCounterFactory? = nil,
        access: AccessControl? = nil, encryption: EncryptionStatus = EncryptionStatus(),
        facts: ServiceFacts = ServiceFacts()
    ) -> App {
        let metrics = ServiceMetrics()
        let gates = UpstreamGates(protection: protection, slotWait: slotWait, clock: gateClock, counter: rateCounter)
        // The gate outside the timing: a fetch it refuses never reached the upstream.
        let served = PerDomain { fetcher($0) }
        let fetchers = FetcherSet { domain in
            GatedFetcher(
                MeasuredFetcher(
                    base: served[domain] ?? NoUpstream.Fetcher(domain: domain),
                    histogram: metrics.upstreamHistogram(domain: domain.rawValue)),
                gate: gates[domain])
        }
        let readThrough = ReadThrough(
            cache: cache, fetchers: fetchers, clock: clock, ttl: TTLTable(overrides: ttlOverrides), gates: gates)
        let auth = AdminAuth(token: adminToken, access: access)

        var router = Router(observer: Self.observer(metrics: metrics, logger: logger))
        // Before the shortcut: a denied request reaches neither the cache nor an upstream, nor a cache counter.
        router.gate = access?.gate
        router.shortcut = { method, target, headers in readThrough.shortcut(method, target, headers) }
        for resource in ResourceTable.rows {
            guard served[resource.domain] != nil else {
                router.get(resource.route) { _ throws(Problem) in throw NoUpstream.problem(resource.domain) }
                continue
            }
            // The shared hit answered from the Redis worker: only where it can be (a shared tier, no disk tier), so
            // that no other request pays for asking.
            var fromShared: CallbackHandler?
            if cache.readsSharedWithoutTasks {
                fromShared = { @Sendable request, reply in readThrough.fromShared(resource, request, reply: reply) }
            }
            router.get(
                resource.route, immediate: { request in readThrough.immediate(resource, request) }, callback: fromShared
            ) { request in
                try await readThrough.handle(resource, request)
            }
        }
        let summary = HealthSummary(readThrough: readThrough)
        if served[.health] != nil {
            router.get("/v1/users/{user}/health/summary") { request in try await summary.handle(request) }
        } else {
            router.get("/v1/users/{user}/health/summary") { _ throws(Problem) in throw NoUpstream.problem(.health) }
        }
        AdminRoutes(auth: auth, cache: cache, readThrough: readThrough).register(in: &router)
        RawCacheRoutes(auth: auth, cache: cache, clock: clock).register(in: &router)
        RekeyRoute(auth: auth, cache: cache, encryption: encryption).register(in: &router)
        OperationsRoutes(
            cache: cache, metrics: metrics, gates: gates, startedAt: .now, access: access, encryption: encryption,
            facts: facts
        ).register(in: &router)
        return App(router: router, cache: cache, metrics: metrics, gates: gates, access: access)
    }

    /// One debug line and one metrics update per answered request: the route template, never the path (which
    /// names a user or key), never a body or a token; the request's id.
    static func observer(metrics: ServiceMetrics, logger: Logger) -> RequestObserver {
        // The captured logger's level is fixed: asked once here, not per request (asking copies its handler).
        let logsRequests = logger.logLevel <= .debug
        return { record in
            let route = record.route ?? "unmatched"
            metrics.recordRequest(route: route, status: record.status, duration: record.duration)
            if logsRequests { logger.debug("request", metadata: requestMetadata(record, route: route)) }
        }
    }

    /// The request line's metadata (built only when debug lines are written: swift-log's argument is lazy).
    private static func requestMetadata(_ record: RequestRecord, route: String) -> Logger.Metadata {
        var metadata: Logger.Metadata = [
            "method": "\(record.method.rawValue)", "route": "\(route)", "status": "\(record.status)",
            "xCache": "\(record.responseHeaders["X-Cache"] ?? "-")", "bytes": "\(record.bodyBytes)",
            "durationMs": "\(Double(record.duration.components.attoseconds) / 1e15 + Double(record.duration.components.seconds) * 1000)",
        ]
        if let id = record.requestID { metadata["requestId"] = "\(id.value)" }
        // The trace id beside the request id: the incoming traceparent's, else the one its fetches send.
        if let traceID = TraceParent.traceID(
            traceparent: record.requestHeaders[TraceParent.headerName], requestID: record.requestID?.value) {
            metadata["traceId"] = "\(traceID)"
        }
        return metadata
    }
}
