/// One HTTP request as the router and handlers see it.
public struct Request: Sendable {
    public var method: HTTPMethod
    /// The request target exactly as the client sent it (undecoded, query included).
    public var target: String
    /// Path segments, percent-decoded by us from `target` (an encoded `/` or NUL stays inside its segment).
    public var pathSegments: [String]
    public var query: QueryParameters
    public var headers: HTTPHeaders
    public var body: [UInt8]
    /// Values of the route's `{name}` segments, filled by the router.
    public var pathParameters: PathParameters
    /// The client's address, formatted only when asked for.
    public var clientAddress: ClientAddress
    /// The request's id (`X-Request-ID`), when the server gives requests ids.
    public var id: RequestID?

    /// Builds a request from the raw target. Throws a 400 problem for an invalid percent-encoding.
    public init(
        method: HTTPMethod,
        target: String,
        headers: HTTPHeaders = HTTPHeaders(),
        body: [UInt8] = [],
        clientAddress: ClientAddress = .unknown,
        id: RequestID? = nil
    ) throws(Problem) {
        let parsed = try RequestTarget(parsing: target)
        self.method = method
        self.target = target
        self.pathSegments = parsed.segments
        self.query = parsed.query
        self.headers = headers
        self.body = body
        self.pathParameters = PathParameters()
        self.clientAddress = clientAddress
        self.id = id
    }

    /// The client's IP literal, or empty when unknown.
    package var remoteAddress: String { clientAddress.description }

    /// The raw (undecoded) path part of the target.
    public var path: Substring {
        target.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false).first ?? ""
    }
}
