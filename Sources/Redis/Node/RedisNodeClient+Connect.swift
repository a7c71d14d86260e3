/// How a node client's commands reach a connection: the slot's own, or a new one (to the node, or to the primary the
/// Sentinels name), and what a failure, a refusal or a primary switch does.
extension RedisNodeClient {
    /// Sends on the slot's connection (connecting first when it has none). A reused connection that turns out closed
    /// (not timed out) is dropped and the commands go once more on a new one: every command we send may be repeated.
    func attempt(
        _ commands: [RedisCommand], on slot: ConnectionSlot, mayRetry: Bool,
        _ done: @escaping @Sendable (Result<[RedisReply], RedisError>) -> Void
    ) {
        obtain(slot) { [self] obtained in
            let connection: RedisConnection
            let fresh: Bool
            switch obtained {
            case .failure(let failure): return done(.failure(failure))
            case .success(let ready): (connection, fresh) = ready
            }
            connection.enqueue(commands, expectedReplies: commands.count, timeout: timeout) { [self] result in
                switch result {
                case .success(let replies):
                    // A demoted primary (CONTRACT §10.3): the next command asks the Sentinels again.
                    if sentinelPrimary != nil, replies.contains(where: { $0.errorReply?.kind == .readOnly }) {
                        slot.drop(connection)
                    }
                    if let refused = replies.lazy.compactMap(\.errorReply).first(where: \.isAuthenticationError) {
                        refusedReply(refused, to: commands)
                    }
                    done(.success(replies))
                case .failure(let failure):
                    slot.drop(connection)
                    if mayRetry, !fresh, failure == .connectionClosed {
                        attempt(commands, on: slot, mayRetry: false, done)
                    } else {
                        done(.failure(.unavailable(failure.reason(on: endpoint, timeout: timeout))))
                    }
                }
            }
        }
    }

    /// The slot's connection, or a new one (one connect per slot at a time: the commands that need the slot
    /// meanwhile wait for it). `fresh`: made for these commands, so a failure on it is not retried.
    private func obtain(
        _ slot: ConnectionSlot,
        _ ready: @escaping @Sendable (Result<(RedisConnection, fresh: Bool), RedisError>) -> Void
    ) {
        switch slot.take(ready) {
        case .use(let connection): ready(.success((connection, false)))
        case .wait: break
        case .refuse: ready(.failure(.shutDown))
        case .connect:
            state.withLockedValue { $0.connectAttempts += 1 }
            // The one task of a connect (TLS and the handshake are async); commands themselves run on futures.
            Task { [self] in
                do throws(RedisError) {
                    slot.connected(try await connect())
                } catch {
                    slot.failed(connectFailure(error))
                }
            }
        }
    }

    /// A new connection: to the node, or to the primary the Sentinels name (checked with `ROLE`).
    private func connect() async throws(RedisError) -> RedisConnection {
        guard let sentinelPrimary else {
            return try await RedisConnection.connect(
                endpoint, at: home, timeout: timeout, connectTimeout: timeout, eventLoopGroup: eventLoopGroup,
                logger: logger)
        }
        let connection = try await sentinelPrimary.connect(endpoint) { [weak self] in
            self?.primaryIs($0, announced: true)
        }
        primaryIs(connection.address, announced: false)
        return connection
    }

    /// The primary is `address` now. A change is a failover followed: counted, the connections to the old primary
    /// closed, the switch handlers told; one Sentinel announced closes the breaker too (the new primary is up, so
    /// fleet writes need not wait out a back-off earned while the old one was dying).
    private func primaryIs(_ address: RedisEndpoint.Address, announced: Bool) {
        let handlers = state.withLockedValue { state -> [@Sendable () -> Void]? in
            defer { state.primary = address }
            guard let old = state.primary, old != address else { return nil }
            state.failovers += 1
            if announced { state.succeeded() }
            return state.switchHandlers
        }
        guard let handlers else { return }
        logger.info(
            "Redis primary switched",
            metadata: ["primary": "\(address)", "group": "\(sentinelPrimary?.sentinel.masterName ?? "")"])
        for slot in slots { slot.dropConnection(unlessAt: address) }
        for handler in handlers { handler() }
    }

    /// Why a connect failed, counted by kind and logged once per back-off (the first failure after a success,
    /// then each probe's). A refused AUTH (`WRONGPASS`, `NOAUTH`, `NOPERM`) is `.refused`, naming the user.
    private func connectFailure(_ error: RedisError) -> RedisError {
        let reason = error.reason(connectingTo: endpoint, timeout: timeout)
        connectFailures.record(error)
        let shouldLog = state.withLockedValue { state -> Bool in
            defer { state.loggedFailure = true }
            return !state.loggedFailure || !state.breaker.isClosed
        }
        if shouldLog { logger.warning("Redis connect failed", metadata: ["reason": "\(reason)"]) }
        return error.isAuthenticationRefusal ? .refused(reason) : .unavailable(reason)
    }

    /// A command Redis refused for the user's credentials or ACL rules (the connection itself is fine): counted with
    /// the refused connects, and logged at most once per the breaker's longest back-off, naming the user.
    private func refusedReply(_ refused: RedisErrorReply, to commands: [RedisCommand]) {
        connectFailures.recordRefusal()
        let now = self.now
        let shouldLog = state.withLockedValue { state -> Bool in
            if let last = state.loggedRefusal, now - last < state.breaker.configuration.maximumBackoff { return false }
            state.loggedRefusal = now
            return true
        }
        guard shouldLog else { return }
        let names = Set(commands.map { $0.name.uppercased() }).sorted()
        logger.warning("Redis refused a command for the user's permissions", metadata: [
            "user": "\(endpoint.user ?? "default")", "redis": "\(endpoint)", "commands": "\(names.joined(separator: ","))",
            "error": "\(refused)",
        ])
    }
}
