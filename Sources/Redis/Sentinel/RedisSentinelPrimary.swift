import Clocks
import NIOConcurrencyHelpers

/// Tells a node client which address is its Sentinel group's primary (CONTRACT §10.3). Each new connection goes to the
/// primary the Sentinels name at that moment, checked with `ROLE` (`connect`); from the first one on, the failovers the
/// Sentinels announce are followed (`RedisSentinel.follow`: a watch kept checked with PINGs, watched again with
/// back-off, at most one switch a second) and each new primary handed to the node client, until `stop()`.
final class RedisSentinelPrimary: Sendable {
    let sentinel: RedisSentinel
    /// The watch's clock (its back-off and its throttle of switches).
    private let clock: any Clock<Duration>
    private let following = NIOLockedValueBox(Following.notYet)

    private enum Following {
        case notYet
        case running(Task<Void, Never>)
        case stopped
    }

    init(_ sentinel: RedisSentinel, clock: any Clock<Duration>) {
        self.sentinel = sentinel
        self.clock = clock
    }

    /// A connection to the primary the Sentinels name now, with `endpoint`'s credentials, TLS and database. The first
    /// call starts following the group's failovers: `onSwitch` gets each announced primary.
    func connect(
        _ endpoint: RedisEndpoint, onSwitch: @escaping @Sendable (RedisEndpoint.Address) -> Void
    ) async throws(RedisError) -> RedisConnection {
        follow(onSwitch)
        return try await sentinel.connectToPrimary(endpoint)
    }

    /// Stops following (a watch under way is cancelled, not awaited); idempotent.
    func stop() {
        let task = following.withLockedValue { following -> Task<Void, Never>? in
            defer { following = .stopped }
            if case .running(let task) = following { return task }
            return nil
        }
        task?.cancel()
    }

    private func follow(_ onSwitch: @escaping @Sendable (RedisEndpoint.Address) -> Void) {
        following.withLockedValue { following in
            guard case .notYet = following else { return }
            let (sentinel, clock) = (self.sentinel, self.clock)
            following = .running(Task { await sentinel.follow(clock: clock) { onSwitch($0.new) } })
        }
    }
}
