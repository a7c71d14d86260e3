import NIOConcurrencyHelpers

/// Refusals by cause (CONTRACT §10.1, §10.2), counted by a node client and the subscriber it is given to: connects
/// refused for their TLS, and refusals of the user's credentials or permissions (a connect's AUTH, a command, a
/// SUBSCRIBE).
public final class RedisConnectFailures: Sendable {
    private let counts = NIOLockedValueBox((tls: 0, authentication: 0))

    public init() {}

    /// A certificate that did not verify (untrusted, expired, wrong name) or a failed TLS handshake.
    public var tls: Int { counts.withLockedValue { $0.tls } }
    /// `WRONGPASS`, `NOAUTH` or `NOPERM` in answer to a connection's AUTH (or SELECT, or ROLE), a command or a SUBSCRIBE.
    public var authentication: Int { counts.withLockedValue { $0.authentication } }

    /// Counts a failed connect's (or SUBSCRIBE's) error when it is one of the two kinds.
    func record(_ error: RedisError) {
        if error.isAuthenticationRefusal {
            recordRefusal()
        } else if case .tls = error {
            counts.withLockedValue { $0.tls += 1 }
        }
    }

    /// Counts a refusal for the credentials or the ACL rules (`WRONGPASS`, `NOAUTH`, `NOPERM`).
    func recordRefusal() {
        counts.withLockedValue { $0.authentication += 1 }
    }
}
