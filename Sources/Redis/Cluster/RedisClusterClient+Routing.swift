/// How a command finds the primary serving its slot, and what a redirection or an unreachable node does.
extension RedisClusterClient {
    /// `command` on the primary serving `slot`. A reply of kind `.error` is returned, not thrown (after redirections:
    /// `MOVED`, `ASK` and `TRYAGAIN` are followed, at most `attempts` times). Throws `.unavailable` when no primary
    /// serves the slot, or when its primary cannot be reached and the map read again names no other.
    public func send(_ command: RedisCommand, slot: Int) async throws(RedisError) -> RedisReply {
        var redirected: RedisEndpoint.Address?
        var asking = false
        for attempt in 1...Self.attempts {
            let address: RedisEndpoint.Address
            if let redirected { address = redirected } else { address = try await owner(of: slot) }
            let node = node(address)
            let reply: RedisReply
            do throws(RedisError) {
                reply = asking ? try await node.send([.asking, command]).last ?? .null : try await node.send(command)
            } catch {
                // A failover, or a node gone with its slots: follow the map to a new owner, if it names one.
                guard attempt < Self.attempts, let map = await refreshMap(), let owner = map.primary(serving: slot),
                    owner != address
                else { throw error }
                (redirected, asking) = (nil, false)
                continue
            }
            switch RedisRedirection(reply, askedHost: address.host) {
            case nil:
                return reply
            case .moved(let movedSlot, let to)?:
                moved(movedSlot, to: to)
                (redirected, asking) = (to, false)
            case .ask(_, let to)?:
                state.withLockedValue { $0.ask += 1 }
                (redirected, asking) = (to, true)
            case .tryAgain?:
                // The keys are moving between nodes: a moment, then the same node again.
                try? await elapsed.sleep(for: .milliseconds(10 * attempt))
            }
        }
        throw .unavailable("slot \(slot) of \(endpoint): still redirected after \(Self.attempts) attempts")
    }

    /// A `MOVED`: counted, the slot's owner patched in the map, and the whole map read again soon.
    func moved(_ slot: Int, to address: RedisEndpoint.Address) {
        state.withLockedValue { state in
            state.moved += 1
            state.map = state.map?.moving(slot, to: address)
        }
        refreshSoon()
    }

    /// The primary serving `slot`, the map read first when there is none or it names none. Throws why no map could
    /// be read (`.refused` for the credentials), or that no primary serves the slot.
    func owner(of slot: Int) async throws(RedisError) -> RedisEndpoint.Address {
        if let owner = state.withLockedValue({ $0.map?.primary(serving: slot) }) { return owner }
        let map = await refreshMap()
        if let owner = map?.primary(serving: slot) { return owner }
        if map == nil, let failure = state.withLockedValue({ $0.mapFailure }) { throw failure }
        throw .unavailable("no primary of the cluster at \(endpoint) serves slot \(slot)")
    }
}
