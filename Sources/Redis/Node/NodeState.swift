import Breaker

/// What a node client keeps behind its lock: its breaker, its latest failure, the primary in use, what it logged.
struct NodeState: Sendable {
    var breaker: CircuitBreaker
    /// Why the latest command failed; nil when it succeeded.
    var lastFailure: RedisError?
    var isShutDown = false
    var connectAttempts = 0
    /// The primary in use (Sentinel), and how many times it changed.
    var primary: RedisEndpoint.Address?
    var failovers = 0
    var switchHandlers: [@Sendable () -> Void] = []
    /// A connect failure was logged since the last success (the next is logged only by a probe).
    var loggedFailure = false
    /// When a command refused for the user's permissions was last logged (the node client's time).
    var loggedRefusal: Duration?

    /// Why a command is refused while the breaker is open: `.refused` when the last failure was a refusal.
    var rejection: RedisError {
        let reason = "circuit breaker open" + (lastFailure.map { " after: \($0.reason)" } ?? "")
        if case .refused? = lastFailure { return .refused(reason) }
        return .unavailable(reason)
    }

    mutating func succeeded() {
        lastFailure = nil
        loggedFailure = false
        breaker.succeeded()
    }
}

extension RedisError {
    /// What a node client answers once it is shut down.
    static let shutDown = RedisError.unavailable("the Redis pool is shut down")
}
