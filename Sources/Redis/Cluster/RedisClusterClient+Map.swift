/// Reading the cluster's slot map: from a primary of the last map, else from a seed.
extension RedisClusterClient {
    /// The map read again now (one read at a time: callers meanwhile share it; the last one when it was read less than
    /// `refreshInterval` ago). Nil when no node told it and none was read before.
    @discardableResult
    public func refreshMap() async -> RedisClusterMap? {
        enum Next {
            case recent(RedisClusterMap?)
            case join(Task<RedisClusterMap?, Never>)
        }
        let now = elapsed.now()
        let next = state.withLockedValue { state -> Next in
            if let refresh = state.refresh { return .join(refresh) }
            if state.isShutDown { return .recent(state.map) }
            if let last = state.lastRefresh, now < last + refreshInterval, state.map != nil { return .recent(state.map) }
            let refresh = Task { await self.readMap() }
            state.refresh = refresh
            return .join(refresh)
        }
        switch next {
        case .recent(let map): return map
        case .join(let refresh): return await refresh.value
        }
    }

    /// The map in use, read first when there is none.
    func currentMap() async throws(RedisError) -> RedisClusterMap? {
        if let map = state.withLockedValue({ $0.map }) { return map }
        return await refreshMap()
    }

    /// Reads the map again without waiting for it (after a `MOVED`: the slot's new owner is known already).
    func refreshSoon() {
        Task { await self.refreshMap() }
    }

    /// Asks the last map's primaries, then the seeds, until one tells a map; keeps it, and shuts down the node clients
    /// of nodes that are no longer primaries. Keeps the last map when none answers.
    private func readMap() async -> RedisClusterMap? {
        let known = state.withLockedValue { $0.map?.primaries ?? [] }
        var asked: Set<RedisEndpoint.Address> = []
        var found: RedisClusterMap?
        var failures: [RedisError] = []
        for address in known + seeds where asked.insert(address).inserted {
            do throws(RedisError) {
                found = try await readMap(from: address)
                break
            } catch {
                failures.append(error)
            }
        }
        let reasons = failures.map(\.reason).joined(separator: "; ")
        let (map, retired) = state.withLockedValue { state -> (RedisClusterMap?, [RedisNodeClient]) in
            defer {
                state.refresh = nil
                state.lastRefresh = elapsed.now()
            }
            guard let found, !state.isShutDown else {
                // A refusal of the credentials is what to fix: it is told rather than the other nodes' outcome.
                let refusal = failures.first { if case .refused = $0 { true } else { false } }
                state.mapFailure = refusal ?? .unavailable("no node of the cluster told its slot map: \(reasons)")
                return (state.map, [])
            }
            state.mapFailure = nil
            state.refreshes += 1
            state.map = found
            let primaries = Set(found.primaries)
            let retired = state.nodes.filter { !primaries.contains($0.key) }
            for address in retired.keys { state.nodes[address] = nil }
            return (found, Array(retired.values))
        }
        for node in retired { node.shutdown() }
        if let found {
            logger.debug("Redis Cluster map read", metadata: [
                "primaries": "\(found.shards.count)", "slotsCovered": "\(found.slotsCovered)",
            ])
        } else {
            logger.warning("no Redis Cluster node told the slot map", metadata: ["reasons": "\(reasons)"])
        }
        return map
    }

    /// The map as the node at `address` tells it: `CLUSTER SHARDS`, or `CLUSTER SLOTS` when it does not know that
    /// (before Redis 7).
    private func readMap(from address: RedisEndpoint.Address) async throws(RedisError) -> RedisClusterMap {
        let node = node(address)
        let shards = try await node.send(.clusterShards)
        let map: RedisClusterMap
        if let refused = shards.errorReply {
            guard refused.kind == .err || refused.kind == .other else { throw .errorReply(refused.answering("CLUSTER")) }
            let slots = try await node.send(.clusterSlots)
            if let refused = slots.errorReply { throw .errorReply(refused.answering("CLUSTER")) }
            map = try RedisClusterMap(slotsReply: slots, askedHost: address.host)
        } else {
            map = try RedisClusterMap(shardsReply: shards, tls: endpoint.tls != nil, askedHost: address.host)
        }
        guard map.slotsCovered > 0 else { throw .unexpectedReply("\(address) serves no slot: not a cluster's node yet") }
        return map
    }
}

