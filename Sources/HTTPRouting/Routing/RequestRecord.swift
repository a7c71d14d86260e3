/// One answered request, as reported to a router's observer (log line, metrics).
public struct RequestRecord: Sendable {
    public var method: HTTPMethod
    /// The raw request target (never the body).
    public var target: String
    /// The request's id, when the server gives requests ids.
    public var requestID: RequestID?
    /// The request's headers (for what a log line may add lazily, e.g. the trace id; never logged whole).
    public var requestHeaders: HTTPHeaders
    /// The matched route's template (`/v1/cache/{key}`), or nil for 404 and invalid targets.
    public var route: String?
    public var status: Int
    /// Response body size in bytes.
    public var bodyBytes: Int
    /// From dispatch to the response being ready.
    public var duration: Duration
    /// The response headers (e.g. `X-Cache`).
    public var responseHeaders: HTTPHeaders
}

/// Called once per request the router answers. Must be cheap and must not block.
public typealias RequestObserver = @Sendable (RequestRecord) -> Void
