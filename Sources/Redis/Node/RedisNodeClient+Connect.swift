/// How a node client's commands reach a connection: the slot's own, or a new one (to the node, or to the primary the
/// Sentinels name), and what a failure, a refusal or a primary switch does.
extension RedisNodeClient {
    /// Sends on the slot's connection (connecting first when it has none). A reused connection that turns out closed
    /// (not timed out) is dropped and the commands go once more on a new one: every command we send may be repeated.
    func attempt(_ submission: Submission, mayRetry: Bool) {
        // The slot's connection, taken without a closure for the case of waiting for one: the usual case.
        if let connection = submission.slot.connection {
            return send(submission, on: connection, fresh: false, mayRetry: mayRetry)
        }
        // One connect per slot at a time: the commands that need the slot meanwhile wait for it. `fresh`: made for
        // these commands, so a failure on it is not retried.
        let obtained: ConnectionSlot.Waiter = { [self] obtained in
            switch obtained {
            case .failure(let failure): finished(submission, .failure(failure))
            case .success(let (connection, fresh)): send(submission, on: connection, fresh: fresh, mayRetry: mayRetry)
            }
        }
        switch submission.slot.take(obtained) {
        case .use(let connection): send(submission, on: connection, fresh: false, mayRetry: mayRetry)
        case .wait: break
        case .refuse: finished(submission, .failure(.shutDown))
        case .connect:
            state.withLockedValue { $0.connectAttempts += 1 }
            // The one task of a connect (TLS and the handshake are async); commands themselves run on futures.
            Task { [self] in
                do throws(RedisError) {
                    submission.slot.connected(try await connect())
                } catch {
                    submission.slot.failed(connectFailure(error, probe: submission.probe))
                }
            }
        }
    }

    private func send(_ submission: Submission, on connection: RedisConnection, fresh: Bool, mayRetry: Bool) {
        connection.enqueue(
            submission.commands, expectedReplies: submission.commands.count, timeout: commandTimeout
        ) { [self] result in
            switch result {
            case .success(let replies):
                // A demoted primary (CONTRACT §10.3): the next command asks the Sentinels again.
                if sentinelPrimary != nil, replies.contains(where: { $0.errorReply?.kind == .readOnly }) {
                    submission.slot.drop(connection)
                }
                if let refused = replies.lazy.compactMap(\.errorReply).first(where: \.isAuthenticationError) {
                    refusedReply(refused, to: submission.commands)
                }
                finished(submission, .success(replies))
            case .failure(let failure):
                submission.slot.drop(connection)
                if mayRetry, !fresh, failure == .connectionClosed {
                    attempt(submission, mayRetry: false)
                } else {
                    finished(submission, .failure(.unavailable(failure.reason(on: endpoint, timeout: timeout))))
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

    /// Why a connect failed, counted by kind and logged once per back-off: the first failure after a success, then
    /// the probe's connect's (`probe`), never those of other slots' connects that were under way when the breaker
    /// opened. A refused AUTH (`WRONGPASS`, `NOAUTH`, `NOPERM`) is `.refused`, naming the user.
    private func connectFailure(_ error: RedisError, probe: Bool) -> RedisError {
        let reason = error.reason(connectingTo: endpoint, timeout: timeout)
        connectFailures.record(error)
        let shouldLog = state.withLockedValue { state -> Bool in
            defer { state.loggedFailure = true }
            return !state.loggedFailure || probe
        }
        if shouldLog { logger.warning("Redis connect failed", metadata: ["reason": "\(reason)"]) }
        return error.isAuthenticationRefusal ? .refused(reason) : .unavailable(reason)
    }

    /// A command Redis refused for the user's credentials or ACL rules (the connection itself is fine): counted with
    /// the refused connects, and logged at most once per the breaker's longest back-off, naming the user.
    private func refusedReply(_ refused: RedisErrorReply, to commands: RedisCommandList) {
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
