extension RedisError {
    /// Why a connect to `endpoint` failed, naming it (never its password): the refused command for an error reply
    /// (`AUTH as USER` for a refused AUTH, `SELECT N`, `ROLE`, …) with what the refusal means (never Redis's text), the
    /// TLS check that failed, or the network's reason.
    func reason(connectingTo endpoint: RedisEndpoint, timeout: Duration) -> String {
        guard case .errorReply(let refused) = self else { return reason(on: endpoint, timeout: timeout) }
        let command = refused.command ?? (refused.isAuthenticationError ? "AUTH" : "PING")
        let step =
            switch command {
            case "AUTH", "HELLO": command + (endpoint.user.map { " as \($0)" } ?? "")
            case "SELECT": "SELECT \(endpoint.database)"
            default: command
            }
        return "\(step) on \(endpoint) was refused: \(refused.summary)"
    }

    /// This failure of a command (or a connect) as a reason naming `endpoint`.
    func reason(on endpoint: RedisEndpoint, timeout: Duration) -> String {
        switch self {
        case .timeout: "command on \(endpoint) timed out after \(timeout.shortDescription)"
        case .connectionClosed: "command on \(endpoint) failed: the connection closed"
        case .protocolViolation(let reason): "\(endpoint) broke the protocol: \(reason)"
        case .tls(let reason): "TLS to \(endpoint) failed: \(reason)"
        case .connectFailed(let reason): "cannot connect to \(endpoint): \(reason)"
        case .unexpectedReply(let reason): "unexpected reply from \(endpoint): \(reason)"
        case .errorReply(let refused): "\(endpoint) refused \(refused.command ?? "a command"): \(refused.summary)"
        case .unavailable(let reason), .refused(let reason), .invalidURL(let reason): reason
        }
    }
}
