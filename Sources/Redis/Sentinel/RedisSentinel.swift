import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// The primary of a Sentinel-watched group, found as Redis's "Sentinel clients" guidelines say: ask each Sentinel
/// in turn `SENTINEL get-master-addr-by-name NAME` (the first that answers wins and moves to the front), connect,
/// check `ROLE` says `master`. Ask again after a failed connection or a `READONLY` reply; `follow` hears failovers.
///
/// Sentinels answer without authenticating themselves (over plain TCP whoever answers at a Sentinel's address can
/// name any primary): a host they name must be a host name or an address, and `follow` hands on at most one switch
/// per `minimumSwitchInterval`.
package final class RedisSentinel: Sendable {
    package let masterName: String
    /// The Sentinels' own password (`sentinel-password=`), and the TLS of the group (Sentinels and data nodes alike).
    let password: String?
    let tls: RedisTLSOptions?
    /// The bound of each connect (its handshake included) and command, to Sentinels and to the primary.
    public let timeout: Duration
    /// How often the watch connection is PINGed; silence past twice this is a lost watch.
    package let watchPingInterval: Duration
    /// The least time between two switches `follow` hands on (announcements meanwhile are coalesced).
    package let minimumSwitchInterval: Duration
    private let sentinels: NIOLockedValueBox<[RedisEndpoint.Address]>
    let eventLoopGroup: any EventLoopGroup
    let logger: Logger

    public init(
        sentinels: [RedisEndpoint.Address], masterName: String, password: String? = nil, tls: RedisTLSOptions? = nil,
        timeout: Duration, watchPingInterval: Duration = .seconds(1), minimumSwitchInterval: Duration = .seconds(1),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "unicache.redis.sentinel")
    ) {
        self.masterName = masterName
        self.password = password
        self.tls = tls
        self.timeout = timeout
        self.watchPingInterval = max(watchPingInterval, .milliseconds(10))
        self.minimumSwitchInterval = minimumSwitchInterval
        self.sentinels = NIOLockedValueBox(sentinels)
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
    }

    /// The group a `redis-sentinel://` endpoint names (its Sentinels, their password, its TLS); nil for a node.
    public convenience init?(
        _ endpoint: RedisEndpoint, timeout: Duration,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "unicache.redis.sentinel")
    ) {
        guard case .sentinel(let sentinels, let masterName, let password) = endpoint.target else { return nil }
        self.init(
            sentinels: sentinels, masterName: masterName, password: password, tls: endpoint.tls, timeout: timeout,
            eventLoopGroup: eventLoopGroup, logger: logger)
    }

    /// The Sentinels in the order they will be asked (the last that answered first).
    public var order: [RedisEndpoint.Address] { sentinels.withLockedValue { $0 } }

    /// The primary's address as the first Sentinel that answers names it.
    package func primaryAddress() async throws(RedisError) -> RedisEndpoint.Address {
        var reasons: [String] = []
        for sentinel in order {
            do throws(RedisError) {
                let address = try await ask(sentinel)
                sentinels.withLockedValue { list in
                    if let index = list.firstIndex(of: sentinel), index != 0 { list.insert(list.remove(at: index), at: 0) }
                }
                return address
            } catch {
                reasons.append("\(sentinel): \(error)")
            }
        }
        throw .connectFailed("no Sentinel named the primary of \(masterName) (\(reasons.joined(separator: "; ")))")
    }

    /// A command connection to the primary: discovered, connected with `endpoint`'s credentials, TLS and database,
    /// checked with `ROLE`. Throws when the node is not a master.
    package func connectToPrimary(_ endpoint: RedisEndpoint) async throws(RedisError) -> RedisConnection {
        let address = try await primaryAddress()
        let connection: RedisConnection
        // The endpoint names the Sentinels only: a failure says which primary they named.
        do throws(RedisError) {
            connection = try await RedisConnection.connect(
                endpoint, at: address, timeout: timeout, connectTimeout: timeout, eventLoopGroup: eventLoopGroup,
                logger: logger)
        } catch .connectFailed(let reason) {
            throw .connectFailed("its primary \(address), as the Sentinels name it: \(reason)")
        } catch .tls(let reason) {
            throw .tls("its primary \(address), as the Sentinels name it: \(reason)")
        }
        do throws(RedisError) {
            let role = try await connection.send(.role)
            if let error = role.errorReply { throw .errorReply(error.answering("ROLE")) }
            guard role.array?.first?.text == "master" else {
                throw .unexpectedReply("\(address) is not a master (ROLE: \((role.array?.first?.text ?? "?").escapedForLog))")
            }
            return connection
        } catch {
            await connection.close()
            throw error
        }
    }

    private func ask(_ sentinel: RedisEndpoint.Address) async throws(RedisError) -> RedisEndpoint.Address {
        let connection: RedisConnection
        do throws(RedisError) {
            connection = try await connect(to: sentinel)
        } catch .errorReply(let refused) {
            throw .connectFailed("\(refused)")
        }
        let reply: RedisReply
        do throws(RedisError) {
            reply = try await connection.send(.sentinelPrimaryAddress(of: masterName))
        } catch {
            await connection.close()
            throw error
        }
        await connection.close()
        guard let pair = reply.array, pair.count == 2, let host = pair[0].text else {
            throw .unexpectedReply("the Sentinel does not know \(masterName) (\(reply.errorReply?.prefix ?? "null"))")
        }
        return try .named(host: host, port: pair[1].int)
    }

    /// A Sentinel as a node of its own: its address, the group's TLS, the Sentinels' password, database 0.
    func endpoint(of sentinel: RedisEndpoint.Address) -> RedisEndpoint {
        RedisEndpoint(target: .node(sentinel), tls: tls, password: password)
    }

    /// A command connection to a Sentinel.
    private func connect(to sentinel: RedisEndpoint.Address) async throws(RedisError) -> RedisConnection {
        try await RedisConnection.connect(
            endpoint(of: sentinel), timeout: timeout, connectTimeout: timeout, eventLoopGroup: eventLoopGroup,
            logger: logger)
    }
}
