import HTTPRouting
import Testing

@testable import Access

/// What the gate reads from a raw target before routing (CONTRACT §8.3): the fast scan over the target's bytes and
/// the router's own parse (for `%`-encoded and absolute-form targets) must tell every spelling apart the same way.
@Suite(.timeLimit(.minutes(1))) struct RequestScopeTests {
    static let cases: [(HTTPMethod, String, String)] = [
        (.get, "/v1/users/alice/subscription", "read alice"),
        (.head, "/v1/users/alice/workouts?from=2026-01-01", "read alice"),
        (.get, "/v1/users/al%69ce/subscription", "read alice"),
        (.get, "http://host/v1/users/alice/subscription", "read alice"),
        (.get, "/v1/users/alice", "admin"),
        (.get, "/v1/users/alice/", "admin"),
        (.get, "/v1/users//subscription", "admin"),
        (.get, "/v1/users/", "admin"),
        (.get, "/v1/cache?prefix=a", "admin"),
        (.post, "/v1/users/alice/events", "admin"),
        (.delete, "/v1/users/alice", "admin"),
        (.get, "/%761/users/alice/subscription", "read alice"),
        (.get, "/%761/cache", "admin"),
        (.get, "/healthz", "open"),
        (.get, "/v1", "open"),
        (.get, "/stats?v1/users/a/b", "open"),
        (.get, "*", "open"),
    ]

    @Test(arguments: cases)
    func aTargetIsToldApartAsTheRouterReadsIt(_ method: HTTPMethod, _ target: String, _ expected: String) {
        let described: String
        switch RequestScope(method: method, target: target) {
        case .open: described = "open"
        case .admin: described = "admin"
        case .read(let user): described = "read \(user.name)"
        }
        #expect(described == expected, "\(method.rawValue) \(target)")
    }
}
