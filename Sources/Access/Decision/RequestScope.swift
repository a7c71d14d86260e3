#if canImport(Glibc)
import Glibc
#endif
import HTTPRouting

/// What a request asks for, told from its raw method and target before it is routed (CONTRACT §8.3).
/// Read on every request: it scans the target's bytes in place once and allocates nothing for a plain one.
enum RequestScope {
    /// Not under `/v1/`: the §5 operations endpoints (and unknown paths, which get their 404): everyone.
    case open
    /// A §3 read (`GET`/`HEAD /v1/users/{user}/…`) of this user's data.
    case read(ReadUser)
    /// Everything else under `/v1/`: the §4 admin endpoints.
    case admin

    init(method: HTTPMethod, target: String) {
        // The raw bytes in place (a target from libmicrohttpd is a native string; one that is not is parsed).
        let scan = target.utf8.withContiguousStorageIfAvailable { Self.scan(method, $0) } ?? .parse
        switch scan {
        case .open:
            self = .open
        case .admin:
            self = .admin
        case .user(let range):
            self = .read(ReadUser(text: target, bytes: range))
        case .parse:
            self = Self(parsing: method, target)
        }
    }

    private enum Scan {
        case open, admin, user(Range<Int>), parse
    }

    private static func scan(_ method: HTTPMethod, _ bytes: UnsafeBufferPointer<UInt8>) -> Scan {
        guard let base = bytes.baseAddress, bytes.count > 0 else { return .parse }
        let end = memchr(base, Int32(UInt8(ascii: "?")), bytes.count).map { base.distance(to: $0.assumingMemoryBound(to: UInt8.self)) }
            ?? bytes.count
        // The router reads a target through its own parse (percent-decoding, the absolute form's authority
        // dropped): a target whose raw bytes it would read otherwise is told from that parse, so that no spelling
        // of a path (`/%761/users/…`, `http://host/v1/users/…`) reaches a route the gate took for another.
        guard base[0] == UInt8(ascii: "/"), memchr(base, Int32(UInt8(ascii: "%")), end) == nil else { return .parse }
        guard hasPrefix(base, end, "/v1/") else { return .open }
        let prefix: StaticString = "/v1/users/"
        guard method == .get || method == .head, hasPrefix(base, end, prefix) else { return .admin }
        let userStart = prefix.utf8CodeUnitCount
        // `{user}` and at least one more segment: `/v1/users/{user}/…`.
        guard let slash = memchr(base + userStart, Int32(UInt8(ascii: "/")), end - userStart) else { return .admin }
        let userEnd = base.distance(to: slash.assumingMemoryBound(to: UInt8.self))
        guard userStart < userEnd, userEnd + 1 < end else { return .admin }
        return .user(userStart..<userEnd)
    }

    /// Whether the first `count` bytes at `base` start with `prefix` (a byte comparison, no iteration).
    private static func hasPrefix(_ base: UnsafePointer<UInt8>, _ count: Int, _ prefix: StaticString) -> Bool {
        count >= prefix.utf8CodeUnitCount && memcmp(base, prefix.utf8Start, prefix.utf8CodeUnitCount) == 0
    }

    /// Rare: from the router's own parse of `target`; a target it cannot parse (it answers 400) is guarded.
    private init(parsing method: HTTPMethod, _ target: String) {
        guard let request = try? Request(method: method, target: target) else {
            self = .admin
            return
        }
        let segments = request.pathSegments
        guard segments.first == "v1" else {
            self = .open
            return
        }
        guard method == .get || method == .head, segments.count > 3, segments[1] == "users", !segments[2].isEmpty
        else {
            self = .admin
            return
        }
        let user = segments[2]
        self = .read(ReadUser(text: user, bytes: 0..<user.utf8.count))
    }
}

/// The user a §3 read names (percent-decoded, as the route sees it), cut from the target only when a decision
/// needs it: modes none and protected never do, and a warm hit does not pay for the substring.
struct ReadUser {
    /// The target (or, for a target that had to be parsed, the decoded user) and the user's bytes in it.
    let text: String
    let bytes: Range<Int>

    var name: Substring {
        let utf8 = text.utf8
        let start = utf8.index(utf8.startIndex, offsetBy: bytes.lowerBound)
        return Substring(utf8[start..<utf8.index(start, offsetBy: bytes.count)])
    }

    /// Whether `user` (a token's claim; absent matches nothing) is this user, byte for byte: both read in place,
    /// no substring cut (~400 instructions on every request of `--auth jwt`).
    func isNamed(_ user: String?) -> Bool {
        guard let user else { return false }
        let inPlace = text.utf8.withContiguousStorageIfAvailable { target in
            user.utf8.withContiguousStorageIfAvailable { claim in
                BytewiseEquality.equal(UnsafeBufferPointer(rebasing: target[bytes]), claim)
            }
        }
        return (inPlace ?? nil) ?? BytewiseEquality.equal(user, name)
    }
}
