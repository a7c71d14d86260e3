/// Sharded pub/sub (Redis 7): a sharded channel lives on the primary serving its slot.
extension RedisClusterClient {
    /// A subscription to `channels` (all in one slot, the first's) on the primary serving it, `SSUBSCRIBE`d: a
    /// `MOVED` answer is followed as for commands. `messages` finishes when the connection ends, and when the slot
    /// moves away from that node (Redis then unsubscribes it): subscribe again, then read what was missed.
    public func shardedSubscription(to channels: [String]) async throws(RedisError) -> RedisSubscription {
        guard let first = channels.first else { throw .unexpectedReply("SSUBSCRIBE needs at least one channel") }
        let slot = RedisHashSlot.of(first)
        var redirected: RedisEndpoint.Address?
        for _ in 1...Self.attempts {
            let address: RedisEndpoint.Address
            if let redirected { address = redirected } else { address = try await owner(of: slot) }
            let subscription = try await RedisSubscription.connect(
                endpoint.node(at: address), timeout: timeout, connectTimeout: timeout, eventLoopGroup: eventLoopGroup,
                logger: logger)
            do throws(RedisError) {
                try await subscription.ssubscribe(channels)
                return subscription
            } catch .errorReply(let refused) {
                await subscription.close()
                guard case .moved(let movedSlot, let to)? = RedisRedirection(.error(refused), askedHost: address.host)
                else { throw .errorReply(refused) }
                moved(movedSlot, to: to)
                redirected = to
            } catch {
                await subscription.close()
                throw error
            }
        }
        throw .unavailable("sharded channel \(first.escapedForLog) of \(endpoint): still redirected after \(Self.attempts) attempts")
    }
}
