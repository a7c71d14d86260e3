extension Problem {
    public static func badRequest(detail: String, type: String = "about:blank", members: [Member] = []) -> Problem {
        Problem(type: type, status: 400, detail: detail, members: members)
    }

    /// 400 that also closes the connection (request framing errors).
    public static func badFraming(detail: String) -> Problem {
        Problem(type: typeURI("bad-framing"), status: 400, detail: detail, headers: ["Connection": "close"])
    }

    public static func unauthorized(detail: String, challenge: String = "Bearer") -> Problem {
        Problem(type: typeURI("unauthorized"), status: 401, detail: detail, headers: ["WWW-Authenticate": challenge])
    }

    public static func forbidden(detail: String, type: String = "about:blank") -> Problem {
        Problem(type: type, status: 403, detail: detail)
    }

    public static func notFound(detail: String = "No resource matches this path.", type: String = "about:blank") -> Problem {
        Problem(type: type, status: 404, detail: detail)
    }

    /// 405 with `Allow` listing the accepted methods.
    package static func methodNotAllowed(allowed: [HTTPMethod], detail: String? = nil) -> Problem {
        let allow = allowed.map(\.rawValue).joined(separator: ", ")
        return Problem(
            status: 405,
            detail: detail ?? "This resource accepts \(allow).",
            headers: ["Allow": allow]
        )
    }

    /// 413 for a body over `limit` bytes; closes the connection (the body is not read).
    public static func contentTooLarge(limit: Int) -> Problem {
        Problem(
            type: typeURI("body-too-large"),
            status: 413,
            detail: "The request body exceeds the limit of \(limit) bytes.",
            members: [Member("limitBytes", .int(limit))],
            headers: ["Connection": "close"]
        )
    }

    /// 431 for a request line and headers beyond the `limit` bytes the server gives them, where each header field
    /// and cookie counts 64 bytes besides its text; closes the connection.
    public static func headerFieldsTooLarge(limit: Int) -> Problem {
        Problem(
            type: typeURI("header-fields-too-large"),
            status: 431,
            detail: "The request line and header fields take more than the \(limit) bytes a request may have "
                + "(each header field and cookie counts 64 bytes besides its text).",
            members: [Member("limitBytes", .int(limit))],
            headers: ["Connection": "close"]
        )
    }

    package static func internalError(detail: String = "The server could not handle this request.") -> Problem {
        Problem(status: 500, detail: detail)
    }

    public static func badGateway(detail: String, type: String = typeURI("upstream-error")) -> Problem {
        Problem(type: type, status: 502, detail: detail)
    }

    /// 503, with `Retry-After` (seconds) when given.
    public static func serviceUnavailable(
        detail: String, retryAfterSeconds: Int? = nil, type: String = "about:blank"
    ) -> Problem {
        var headers = HTTPHeaders()
        if let retryAfterSeconds { headers.add(name: "Retry-After", value: String(retryAfterSeconds)) }
        return Problem(type: type, status: 503, detail: detail, headers: headers)
    }

    /// 507: the service could not store what the request asked it to keep.
    public static func insufficientStorage(detail: String, type: String = typeURI("insufficient-storage")) -> Problem {
        Problem(type: type, status: 507, detail: detail)
    }

    public static func gatewayTimeout(detail: String, type: String = "about:blank") -> Problem {
        Problem(type: type, status: 504, detail: detail)
    }
}
