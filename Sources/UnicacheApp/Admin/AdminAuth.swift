import Access
import HTTPRouting

/// Bearer-token check for every admin endpoint (CONTRACT §4): 403 when no token is configured, 401 with
/// `WWW-Authenticate: Bearer realm="unicache"` for a missing one (with `error="invalid_token"` for a wrong one),
/// compared in constant time.
/// With `--auth jwt` a bearer JWT with the scope `unicache:admin` is accepted too (CONTRACT §8.3).
struct AdminAuth: Sendable {
    private let token: [UInt8]?
    private let access: AccessControl?

    init(token: String?, access: AccessControl? = nil) {
        self.token = token.flatMap { $0.isEmpty ? nil : Array($0.utf8) }
        self.access = access
    }

    /// Adds admin routes, each behind `check`: no admin handler sees a request that did not pass it.
    func register(_ routes: [(HTTPMethod, String, AsyncHandler)], in router: inout Router) {
        for (method, pattern, handler) in routes {
            router.on(method, pattern) { request in
                try check(request)
                return try await handler(request)
            }
        }
    }

    func check(_ request: Request) throws(Problem) {
        if let access, access.grantsAdmin(request.headers) { return }
        guard let token else {
            throw Problem.forbidden(
                detail: AdminAuth.disabledDetail(jwt: access?.mode == .jwt),
                type: Problem.typeURI("admin-disabled"))
        }
        // The access decision's own parser: `Bearer` and one or more spaces, whatever the mode (CONTRACT §8.9).
        let detail = "A valid bearer token is required: Authorization: Bearer TOKEN."
        guard case .token(let presented) = BearerToken.credential(request.headers) else {
            throw Problem.unauthorized(detail: detail, challenge: Self.realm)
        }
        guard AdminToken.equal(Array(presented.text.utf8), token) else {
            throw Problem.unauthorized(
                detail: detail,
                challenge: Self.realm + ", error=\"invalid_token\", error_description=\"not the admin token\"")
        }
    }

    /// The challenge of every 401, in every mode (RFC 6750 section 3, as `--auth jwt` answers user requests).
    static let realm = "Bearer realm=\"unicache\""

    /// The whole fix: either way of giving the token (a file keeps it off the command line), and with `--auth jwt`
    /// the admin scope.
    static func disabledDetail(jwt: Bool) -> String {
        "Admin endpoints are disabled: start unicache with --admin-token TOKEN or --admin-token-file FILE (a file of "
            + "mode 600 or 400; UNICACHE_ADMIN_TOKEN, UNICACHE_ADMIN_TOKEN_FILE)"
            + (jwt ? ", or present a JWT with the scope unicache:admin." : ".")
    }
}
