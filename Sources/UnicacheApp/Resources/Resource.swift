import Clocks
import Foundation
import HTTPRouting
import Settings
import UnifiedCache

/// One read-through resource of CONTRACT §3: a row of `ResourceTable`.
struct Resource: Sendable {
    /// Route template below `/v1/users/{user}` (e.g. `/health/averages/{weekday}`).
    let path: String
    /// Which fetcher (demo or `--upstream`) serves it.
    let domain: UpstreamDomain
    let namespace: String
    /// Validates the request's parameters and derives the key, upstream request and policy.
    let resolve: @Sendable (ResourceContext) throws(InputError) -> ResolvedResource
    /// The full template, `/v1/users/{user}` and `path`: made once, so that the router, the remembered answers and
    /// the metrics table all hold one string (equal strings of one storage compare without reading their bytes).
    let route: String

    init(
        path: String, domain: UpstreamDomain, namespace: String,
        resolve: @escaping @Sendable (ResourceContext) throws(InputError) -> ResolvedResource
    ) {
        self.path = path
        self.domain = domain
        self.namespace = namespace
        self.resolve = resolve
        route = "/v1/users/{user}" + path
    }
}

/// What a row's `resolve` sees: the validated user, the request, the time and the TTL table.
struct ResourceContext: Sendable {
    let user: String
    let request: Request
    let now: Date
    let ttl: TTLTable

    /// The query parameter `name`: nil when absent, an error when given twice.
    func query(_ name: String) throws(InputError) -> String? { try InputValidation.single(name, of: request.query) }
    func path(_ name: String) -> String { request.pathParameters[name] ?? "" }

    /// The time zone of `?tz=` (default UTC) and its name as normalised for keys and upstream queries.
    func timeZone() throws(InputError) -> (zone: TimeZone, name: String) {
        let name = try query("tz")
        return (try InputValidation.timeZone(name), name ?? "UTC")
    }

    /// A resolved resource for `namespace` with the upstream path `/users/{user}{suffix}`.
    func resolved(
        _ namespace: String, key: String, suffix: String, query: [QueryItem] = [],
        parameters: [String: String] = [:], policy: FreshnessPolicy
    ) -> ResolvedResource {
        ResolvedResource(
            fetch: FetchRequest(
                key: key, namespace: namespace, user: user, path: "/users/\(PathEncoding.segment(user))\(suffix)", query: query,
                parameters: parameters, requestID: request.id?.value),
            policy: policy, resolvedAt: now)
    }
}

/// A request turned into what the cache needs.
struct ResolvedResource: Sendable {
    var fetch: FetchRequest
    var policy: FreshnessPolicy
    /// The time the key and policy were derived at (a "today" key names that day): their remembered answer belongs to
    /// that second, however late the read ends.
    var resolvedAt: Date
    var key: String { fetch.key }
}

/// Per-namespace TTLs: the contract's defaults, overridden by `--ttl NAMESPACE=DURATION`.
struct TTLTable: Sendable {
    var overrides: [String: Duration] = [:]

    func span(_ namespace: String, default value: Duration) -> Duration { overrides[namespace] ?? value }
    func override(_ namespace: String) -> Duration? { overrides[namespace] }
}
