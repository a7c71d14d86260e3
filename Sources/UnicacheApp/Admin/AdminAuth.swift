import HTTPRouting

/// Bearer-token check for every admin endpoint (CONTRACT §4): 403 when no token is configured,
/// 401 with `WWW-Authenticate: Bearer` for a missing or wrong one, compared in constant time.
struct AdminAuth: Sendable {
    private let token: [UInt8]?

    init(token: String?) {
        self.token = token.flatMap { $0.isEmpty ? nil : Array($0.utf8) }
    }

    func check(_ request: Request) throws(Problem) {
        guard let token else {
            throw Problem.forbidden(
                detail: "Admin endpoints are disabled: start unicache with --admin-token TOKEN or set UNICACHE_ADMIN_TOKEN.",
                type: Problem.typeURI("admin-disabled"))
        }
        guard let header = request.headers["Authorization"], header.count > 7,
            header.prefix(7).lowercased() == "bearer ",
            Self.constantTimeEqual(Array(header.utf8.dropFirst(7)), token)
        else {
            throw Problem.unauthorized(detail: "A valid bearer token is required: Authorization: Bearer TOKEN.")
        }
    }

    /// Compares every byte of the longer input whatever the contents, so timing does not reveal a prefix.
    static func constantTimeEqual(_ a: [UInt8], _ b: [UInt8]) -> Bool {
        var difference = UInt8(truncatingIfNeeded: a.count ^ b.count)
        for index in 0..<max(a.count, b.count) {
            let x = index < a.count ? a[index] : 0
            let y = index < b.count ? b[index] : 0
            difference |= x ^ y
        }
        return difference == 0 && a.count == b.count
    }
}
