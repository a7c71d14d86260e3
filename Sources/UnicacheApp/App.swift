import Access
import Clocks
import Foundation
import HTTPRouting
import Logging
import Settings
import UnifiedCache
import UpstreamGate

/// The assembled application: the router with every route of the contract over one cache.
/// Tests build it directly (`App.build` from an `AppDependencies`) and drive it in-process or behind a live server.
package struct App: Sendable {
    public let router: Router
    public let cache: UnifiedCacheManager
    let metrics: ServiceMetrics
    let gates: UpstreamGates
    /// Who may read what (CONTRACT §8); `nil` when built without one (every request admitted).
    public let access: AccessControl?
}

extension App {
    /// Every route of the contract over `dependencies.cache`.
    package static func build(_ dependencies: AppDependencies) -> App {
        let (cache, clock, access, encryption) =
            (dependencies.cache, dependencies.clock, dependencies.access, dependencies.encryption)
        let metrics = ServiceMetrics()
        // The process's monotonic time, from zero now: the uptime's origin and every fetch's timing.
        let elapsed = Elapsed(dependencies.gateClock)
        let gates = UpstreamGates(
            protection: dependencies.protection, slotWait: dependencies.slotWait, clock: dependencies.gateClock,
            counter: dependencies.rateCounter, userShare: dependencies.userShare)
        // The gate outside the timing: a fetch it refuses never reached the upstream.
        let served = PerDomain { dependencies.fetchers[$0] }
        let fetchers = FetcherSet { domain in
            GatedFetcher(
                MeasuredFetcher(
                    base: served[domain] ?? NoUpstream.Fetcher(domain: domain),
                    histogram: metrics.upstreamHistogram(domain: domain.rawValue), elapsed: elapsed),
                gate: gates[domain])
        }
        let readThrough = ReadThrough(
            cache: cache, fetchers: fetchers, clock: clock, ttl: TTLTable(overrides: dependencies.ttlOverrides),
            gates: gates)
        let auth = AdminAuth(token: dependencies.adminToken, access: access)

        var router = Router(observer: Self.observer(metrics: metrics, logger: dependencies.logger))
        // Before the shortcut: a denied request reaches neither the cache nor an upstream, nor a cache counter.
        router.accessCheck = access?.accessCheck
        router.shortcut = { readThrough.shortcut($0, $1, $2, $3, $4) }
        for resource in ResourceTable.rows {
            guard served[resource.domain] != nil else {
                router.get(resource.route) { _ throws(Problem) in throw NoUpstream.problem(resource.domain) }
                continue
            }
            router.handle(.get, resource.route) { request in readThrough.answer(resource, request) }
        }
        let summary = HealthSummary(readThrough: readThrough)
        if served[.health] != nil {
            router.get("/v1/users/{user}/health/summary") { request in try await summary.handle(request) }
        } else {
            router.get("/v1/users/{user}/health/summary") { _ throws(Problem) in throw NoUpstream.problem(.health) }
        }
        AdminRoutes(
            auth: auth, cache: cache, readThrough: readThrough, encryption: encryption, servesHealth: served[.health] != nil
        ).register(in: &router)
        RawCacheRoutes(auth: auth, cache: cache, clock: clock).register(in: &router)
        OperationsRoutes(
            cache: cache, metrics: metrics, gates: gates, elapsed: elapsed, access: access, encryption: encryption,
            facts: dependencies.facts
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
            "durationMs": "\(record.duration.milliseconds)",
        ]
        if let id = record.requestID { metadata["requestId"] = "\(id.value)" }
        // How the cache answered, with its reason (`detail=user-budget` for a user past their share, CONTRACT §15.5).
        if let status = record.responseHeaders["Cache-Status"] { metadata["cacheStatus"] = "\(status)" }
        // The trace id beside the request id: the incoming traceparent's, else the one its fetches send.
        if let traceID = TraceParent.traceID(
            traceparent: record.requestHeaders[TraceParent.headerName], requestID: record.requestID?.value) {
            metadata["traceId"] = "\(traceID)"
        }
        return metadata
    }
}
