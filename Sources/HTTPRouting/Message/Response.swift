/// One HTTP response. The server sets `Content-Length`; HEAD answers carry no body on the wire.
public struct Response: Sendable, Equatable {
    public var status: Int
    public var headers: HTTPHeaders
    public var body: [UInt8]

    public init(status: Int = 200, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
    }

    /// A JSON response from already-encoded bytes.
    public static func json(_ body: [UInt8], status: Int = 200, headers: HTTPHeaders = HTTPHeaders()) -> Response {
        var headers = headers
        headers.replaceOrAdd(name: "Content-Type", value: "application/json")
        return Response(status: status, headers: headers, body: body)
    }

    /// A JSON response from an already-encoded string.
    public static func json(_ body: String, status: Int = 200, headers: HTTPHeaders = HTTPHeaders()) -> Response {
        json(Array(body.utf8), status: status, headers: headers)
    }

    /// A plain-text response.
    public static func text(_ body: String, status: Int = 200, contentType: String = "text/plain; charset=utf-8") -> Response {
        Response(status: status, headers: ["Content-Type": contentType], body: Array(body.utf8))
    }
}
