import HTTPRouting

/// What a request asks for, told from its raw method and target before it is routed (CONTRACT §8.3).
/// Read on every request: it scans the target once and allocates nothing for a plain one.
enum RequestScope {
    /// Not under `/v1/`: the §5 operations endpoints (and unknown paths, which get their 404): everyone.
    case open
    /// A §3 read (`GET`/`HEAD /v1/users/{user}/…`) of this user's data (percent-decoded, as the route sees it).
    case read(user: Substring)
    /// Everything else under `/v1/`: the §4 admin endpoints.
    case admin

    init(method: HTTPMethod, target: String) {
        let utf8 = target.utf8
        let end = utf8.firstIndex(of: UInt8(ascii: "?")) ?? utf8.endIndex
        let path = utf8[utf8.startIndex..<end]
        guard path.starts(with: "/v1/".utf8) else {
            self = .open
            return
        }
        let prefix = "/v1/users/".utf8
        guard method == .get || method == .head, path.starts(with: prefix) else {
            self = .admin
            return
        }
        let userStart = utf8.index(utf8.startIndex, offsetBy: prefix.count)
        // `{user}` and at least one more segment: `/v1/users/{user}/…`.
        guard let userEnd = path[userStart...].firstIndex(of: UInt8(ascii: "/")), userStart < userEnd,
              utf8.index(after: userEnd) < end
        else {
            self = .admin
            return
        }
        let raw = Substring(utf8[userStart..<userEnd])
        guard raw.utf8.contains(UInt8(ascii: "%")) else {
            self = .read(user: raw)
            return
        }
        // Rare: let the router's own parsing decode it, so that both see the same user.
        guard let request = try? Request(method: method, target: target), request.pathSegments.count > 3 else {
            self = .admin
            return
        }
        self = .read(user: Substring(request.pathSegments[2]))
    }
}
