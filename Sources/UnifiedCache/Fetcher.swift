import Foundation

/// The pluggable source behind a namespace: a demo generator or an HTTP upstream.
public protocol Fetcher: Sendable {
    func fetch(_ request: FetchRequest) async throws(FetchError) -> FetchedValue
}

/// A normalised description of what to fetch; equal requests have equal keys.
public struct FetchRequest: Sendable, Equatable {
    public var key: String
    public var namespace: String
    public var user: String?
    /// The upstream path, without the `/v1` prefix, e.g. `/users/alice/activities`.
    public var path: String
    /// The normalised query, in the order it is sent upstream.
    public var query: [QueryItem]
    /// Named, already validated parameters (e.g. `date`, `tz`, `weekday`, `types`, `days`) for fetchers that generate data.
    public var parameters: [String: String]
    /// Work nobody waits for (refresh-ahead, warming): it yields to requests at the upstream gate.
    public var background = false
    /// Whether the read's outcome is counted in the statistics: false for the parts of a composed answer, which its
    /// route counts once (`UnifiedCacheManager.countComposed`).
    public var counted = true
    /// The id of the request that caused this fetch (the leader's, for a coalesced one), sent upstream so
    /// both sides' logs can be joined; nil for work no request caused.
    public var requestID: String?
    /// The causing request's W3C `traceparent` and `tracestate` headers as received (unparsed; nil when absent),
    /// for the fetcher to continue its trace.
    public var traceparent: String?
    public var tracestate: String?

    public init(
        key: String, namespace: String, user: String?, path: String,
        query: [QueryItem] = [], parameters: [String: String] = [:], requestID: String? = nil
    ) {
        self.key = key
        self.namespace = namespace
        self.user = user
        self.path = path
        self.query = query
        self.parameters = parameters
        self.requestID = requestID
    }
}

public struct QueryItem: Sendable, Equatable, Hashable {
    public var name: String
    public var value: String
    public init(_ name: String, _ value: String) {
        self.name = name
        self.value = value
    }
}

/// What a fetcher returns on success.
public struct FetchedValue: Sendable, Equatable {
    public var body: [UInt8]
    public var contentType: String
    /// `false` when the upstream said `Cache-Control: no-store`: served, not stored.
    public var storable: Bool

    public init(body: [UInt8], contentType: String = "application/json", storable: Bool = true) {
        self.body = body
        self.contentType = contentType
        self.storable = storable
    }
}

/// Why a fetch failed. Failed fetches are never stored as data.
public enum FetchError: Error, Sendable, Equatable {
    /// The upstream has no such resource (remembered for the policy's negative TTL).
    case notFound
    /// The upstream said 429; `retryAfter` in whole seconds when it said so.
    case rateLimited(retryAfter: Int?)
    /// Connection error, 5xx, unparsable answer.
    case unavailable(String)
    /// No request reached the upstream (connection refused, host unreachable, name not resolved): a failure,
    /// not a fetch.
    case unreachable(String)
    /// No answer within the upstream timeout (or no slot to send it within the request's deadline).
    case timeout
    /// The upstream gate kept the request from the upstream (budget, 429 pause, open circuit).
    case refused(UpstreamRefusal)
    /// The request never left the process: the HTTP client refused it as built (a header name or value, its URL).
    /// That request's failure alone: not a fetch, not an upstream failure, nothing toward the upstream's circuit.
    case invalidRequest(String)
}
