/// Why Redis gave no reply, could not be reached, or could not be named: the link's one error. It never contains a
/// password, nor Redis's text where that may repeat one (`RedisErrorReply`).
///
/// A connection throws the cases from `timeout` to `errorReply`. A node client turns each failure into `.unavailable`
/// or `.refused`, with a reason that names its endpoint: what the shared tier counts, logs and puts in a problem.
public enum RedisError: Error, Sendable, Hashable, CustomStringConvertible {
    /// No reply within the deadline: the commands in flight failed and the connection was closed.
    case timeout
    /// The connection is closed (or closed while the command waited).
    case connectionClosed
    /// The server sent what is not RESP2, or a reply over a limit; the connection was closed.
    case protocolViolation(String)
    /// The TLS handshake or certificate verification failed (the reason says which check).
    case tls(String)
    /// The connect failed (refused, timed out, no Sentinel named the primary).
    case connectFailed(String)
    /// A reply of the wrong shape for what was asked (e.g. ROLE not `master`, a Sentinel naming no valid host).
    case unexpectedReply(String)
    /// Redis refused a command the link sends itself (`AUTH`, `SELECT`, `ROLE`, `SUBSCRIBE`, `PING`): its error reply,
    /// cut to the prefix for a command that carries a secret.
    case errorReply(RedisErrorReply)
    /// A node client could not get a reply: connect refused or timed out, I/O error, command timeout, the breaker is
    /// open, or the node client was shut down.
    case unavailable(String)
    /// A node client's credentials or permissions were refused (`WRONGPASS`, `NOAUTH`, `NOPERM`), or its breaker is
    /// open after such a refusal: a configuration to fix, not an outage. The reason names the user.
    case refused(String)
    /// A Redis URL that could not be read (the message never contains its password).
    case invalidURL(String)

    public var description: String {
        switch self {
        case .timeout: "Redis command timed out"
        case .connectionClosed: "Redis connection closed"
        case .protocolViolation(let reason): "Redis protocol violation: \(reason)"
        case .tls(let reason): "Redis TLS failed: \(reason)"
        case .connectFailed(let reason): "Redis connect failed: \(reason)"
        case .unexpectedReply(let reason): "unexpected Redis reply: \(reason)"
        case .errorReply(let reply): reply.summary
        case .unavailable(let reason): "Redis unavailable: \(reason)"
        case .refused(let reason): "Redis refused: \(reason)"
        case .invalidURL(let message): message
        }
    }

    /// The reason alone (a node client's, a URL's), else the description.
    public var reason: String {
        switch self {
        case .unavailable(let reason), .refused(let reason), .invalidURL(let reason): reason
        default: description
        }
    }

    /// An error reply refusing the credentials or the ACL rules (`WRONGPASS`, `NOAUTH`, `NOPERM`).
    var isAuthenticationRefusal: Bool {
        if case .errorReply(let reply) = self { return reply.isAuthenticationError }
        return false
    }
}
