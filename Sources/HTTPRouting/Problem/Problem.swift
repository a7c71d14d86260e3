/// An RFC 9457 problem detail. Handlers throw it; the router renders it as `application/problem+json`.
public struct Problem: Error, Sendable, Equatable {
    /// A URI naming the problem type, or `about:blank`.
    public var type: String
    public var title: String
    public var status: Int
    public var detail: String
    /// Extension members, rendered after the standard ones in this order.
    public var members: [Member]
    /// Extra response headers (`Allow`, `Retry-After`, `WWW-Authenticate`, `Connection`).
    public var headers: HTTPHeaders

    public struct Member: Sendable, Equatable {
        public var name: String
        public var value: ProblemValue

        public init(_ name: String, _ value: ProblemValue) {
            self.name = name
            self.value = value
        }
    }

    /// - Parameter title: defaults to the status code's reason phrase.
    public init(
        type: String = "about:blank",
        title: String? = nil,
        status: Int,
        detail: String,
        members: [Member] = [],
        headers: HTTPHeaders = HTTPHeaders()
    ) {
        self.type = type
        self.title = title ?? HTTPStatus.reasonPhrase(status)
        self.status = status
        self.detail = detail
        self.members = members
        self.headers = headers
    }

    /// The base of our problem type URIs.
    package static let typeBase = "https://unicache.dev/problems/"

    /// `https://unicache.dev/problems/<slug>`.
    public static func typeURI(_ slug: String) -> String {
        typeBase + slug
    }
}

/// A JSON value an extension member can hold.
public enum ProblemValue: Sendable, Equatable {
    case string(String)
    case int(Int)
    case bool(Bool)
    case strings([String])
}
