/// Why a command got no reply, or a connection could not be made. Never contains a password.
public enum RedisNIOError: Error, Sendable, Equatable, CustomStringConvertible {
    /// No reply within the deadline: the commands in flight failed and the connection was closed.
    case timeout
    /// The connection is closed (or closed while the command waited).
    case connectionClosed
    /// The server sent what is not RESP2, or a reply over a limit; the connection was closed.
    case protocolViolation(String)
    /// The TLS handshake or certificate verification failed (the reason says which check).
    case tls(String)
    /// Connect, AUTH or SELECT failed.
    case connectFailed(String)
    /// A reply of the wrong shape for what was asked (e.g. ROLE not `master`).
    case unexpectedReply(String)

    public var description: String {
        switch self {
        case .timeout: "Redis command timed out"
        case .connectionClosed: "Redis connection closed"
        case .protocolViolation(let reason): "Redis protocol violation: \(reason)"
        case .tls(let reason): "Redis TLS failed: \(reason)"
        case .connectFailed(let reason): "Redis connect failed: \(reason)"
        case .unexpectedReply(let reason): "unexpected Redis reply: \(reason)"
        }
    }
}

extension Duration {
    /// "50 ms", "1.5 s": for messages.
    package var shortDescription: String {
        let (seconds, attoseconds) = components
        let totalMilliseconds = seconds * 1000 + attoseconds / 1_000_000_000_000_000
        if totalMilliseconds < 1000 { return "\(totalMilliseconds) ms" }
        if totalMilliseconds % 1000 == 0 { return "\(totalMilliseconds / 1000) s" }
        return "\(Double(totalMilliseconds) / 1000) s"
    }
}
