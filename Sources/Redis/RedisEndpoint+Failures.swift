
extension RedisEndpoint {
    /// Why a connect failed, naming this endpoint (never its password): the refused command for an error reply
    /// (`AUTH as USER` for a refused AUTH, `SELECT N`, `ROLE`, …) with what the refusal means (never Redis's text), the
    /// TLS check that failed, or the network's reason.
    func reason(connecting error: any Error, timeout: Duration) -> String {
        switch error {
        case let refused as RedisServerError:
            let command = refused.command ?? (refused.isAuthenticationError ? "AUTH" : "PING")
            let step =
                switch command {
                case "AUTH", "HELLO": command + (user.map { " as \($0)" } ?? "")
                case "SELECT": "SELECT \(database)"
                default: command
                }
            return "\(step) on \(self) was refused: \(refused.summary)"
        case let failure as RedisNIOError:
            return reason(failure, timeout: timeout)
        default:
            return "cannot connect to \(self): \(error)"
        }
    }

    /// A RedisNIO failure as a reason naming this endpoint.
    func reason(_ failure: RedisNIOError, timeout: Duration) -> String {
        switch failure {
        case .timeout: "command on \(self) timed out after \(timeout.shortDescription)"
        case .connectionClosed: "command on \(self) failed: the connection closed"
        case .protocolViolation(let reason): "\(self) broke the protocol: \(reason)"
        case .tls(let reason): "TLS to \(self) failed: \(reason)"
        case .connectFailed(let reason): "cannot connect to \(self): \(reason)"
        case .unexpectedReply(let reason): "unexpected reply from \(self): \(reason)"
        }
    }
}
