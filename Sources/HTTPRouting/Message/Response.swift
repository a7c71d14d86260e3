/// One HTTP response. The server sets `Content-Length`; HEAD answers carry no body on the wire.
public struct Response: Sendable, Equatable {
    public var status: Int { didSet { memo = nil } }
    public var headers: HTTPHeaders { didSet { memo = nil } }
    public var body: [UInt8] { didSet { memo = nil } }
    /// Set by `reusable()`: where the server keeps the wire form it prepares of this exact response, to send it
    /// again without rebuilding it; it goes with the last copy of the response. Any change drops it.
    public private(set) var memo: ResponseMemo?

    public init(status: Int = 200, headers: HTTPHeaders = HTTPHeaders(), body: [UInt8] = []) {
        self.status = status
        self.headers = headers
        self.body = body
        self.memo = nil
    }

    /// This response, marked as sent many times unchanged (a static answer, a cached entry within one
    /// second): the server may prepare its wire form once and reuse it for every copy. Each call makes a new memo.
    public func reusable() -> Response {
        var response = self
        response.memo = ResponseMemo()
        return response
    }

    public static func == (lhs: Response, rhs: Response) -> Bool {
        lhs.status == rhs.status && lhs.headers == rhs.headers && lhs.body == rhs.body
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
