import Redis
import RedisTestSupport
import TestSupport
import Testing

/// Runs `body` with a node client of `endpoint` (`size` connections, each command bounded by `timeout`), shut down
/// afterwards whether `body` returns or throws.
func withNodeClient<Value>(
    _ endpoint: RedisEndpoint, timeout: Duration = .seconds(5), size: Int = 4,
    isolation: isolated (any Actor)? = #isolation, _ body: (RedisNodeClient) async throws -> Value
) async rethrows -> Value {
    let node = RedisNodeClient(endpoint: endpoint, timeout: timeout, clock: ContinuousClock(), size: size)
    defer { node.shutdown() }
    return try await body(node)
}

/// Runs `body` with a fresh redis-server and a node client of it (see `withNodeClient`): the client shut down and the
/// server stopped afterwards, whatever happens.
func withRedisNode<Value>(
    password: String? = nil, timeout: Duration = .seconds(5), size: Int = 4,
    isolation: isolated (any Actor)? = #isolation, _ body: (RedisServerProcess, RedisNodeClient) async throws -> Value
) async throws -> Value {
    try await withRedisServer(password: password, isolation: isolation) { server in
        try await withNodeClient(server.endpoint, timeout: timeout, size: size, isolation: isolation) { node in
            try await body(server, node)
        }
    }
}

/// Runs `body` with a fresh cluster and a client seeded by it (each command bounded by `timeout`): the client shut
/// down and the cluster stopped afterwards, whatever happens.
func withClusterClient<Value>(
    timeout: Duration = .seconds(5), isolation: isolated (any Actor)? = #isolation,
    _ body: (RedisTestCluster, RedisClusterClient) async throws -> Value
) async throws -> Value {
    try await withService(RedisTestCluster.start(), isolation: isolation) { cluster in
        let client = RedisClusterClient(endpoint: cluster.seed, timeout: timeout, clock: ContinuousClock())
        defer { client.shutdown() }
        return try await body(cluster, client)
    }
}

extension RedisError {
    /// The error reply of an `.errorReply` (for `caught`).
    var errorReplyValue: RedisErrorReply? {
        if case .errorReply(let reply) = self { reply } else { nil }
    }

    /// The reason of a `.tls` failure (for `caught`).
    var tlsReason: String? {
        if case .tls(let reason) = self { reason } else { nil }
    }
}

/// The reason of the next event in `events` (within `bound`), which must be `.disconnected`; nil after recording an
/// issue otherwise.
func disconnectReason(
    _ events: AsyncEventQueue<RedisSubscriber.Event>, within bound: Duration = .seconds(10),
    sourceLocation: SourceLocation = #_sourceLocation
) async -> String? {
    let event = await events.next(within: bound)
    guard case .disconnected(let reason)? = event else {
        Issue.record("expected .disconnected, got \(String(describing: event))", sourceLocation: sourceLocation)
        return nil
    }
    return reason
}
