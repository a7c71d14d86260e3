import HTTPRouting

/// What a request asks for, told from its raw method and target before it is routed (CONTRACT §8.3).
enum RequestScope: Equatable {
    /// Not under `/v1/`: the §5 operations endpoints (and unknown paths, which get their 404): everyone.
    case open
    /// A §3 read (`GET`/`HEAD /v1/users/{user}/…`) of this user's data (percent-decoded, as the route sees it).
    case read(user: String)
    /// Everything else under `/v1/`: the §4 admin endpoints.
    case admin

    init(method: HTTPMethod, target: String) {
        let path = Self.path(of: target)
        guard path.hasPrefix("/v1/") else {
            self = .open
            return
        }
        let segments = path.utf8.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        // "", "v1", "users", user, at least one more segment.
        guard method == .get || method == .head, segments.count >= 5,
              segments[2].elementsEqual("users".utf8), !segments[3].isEmpty
        else {
            self = .admin
            return
        }
        let raw = segments[3]
        guard raw.contains(UInt8(ascii: "%")) else {
            self = .read(user: String(decoding: raw, as: UTF8.self))
            return
        }
        // Rare: let the router's own parsing decode it, so that both see the same user.
        guard let request = try? Request(method: method, target: target), request.pathSegments.count > 2 else {
            self = .admin
            return
        }
        self = .read(user: request.pathSegments[2])
    }

    private static func path(of target: String) -> Substring {
        guard let query = target.utf8.firstIndex(of: UInt8(ascii: "?")) else { return Substring(target) }
        return Substring(target.utf8[..<query])
    }
}
