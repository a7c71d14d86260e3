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
public final class RedisSentinel: Sendable {
    public let masterName: String
    /// How each Sentinel is reached (its password, TLS, timeouts); the host and port are replaced per Sentinel.
    public let sentinelTemplate: RedisConnectionConfiguration
    /// How often the watch connection is PINGed; silence past twice this is a lost watch.
    public let watchPingInterval: Duration
    /// The least time between two switches `follow` hands on (announcements meanwhile are coalesced).
    public let minimumSwitchInterval: Duration
    private let sentinels: NIOLockedValueBox<[RedisURL.Address]>
    let eventLoopGroup: any EventLoopGroup
    let logger: Logger

    public init(
        sentinels: [RedisURL.Address], masterName: String, sentinelTemplate: RedisConnectionConfiguration,
        watchPingInterval: Duration = .seconds(1), minimumSwitchInterval: Duration = .seconds(1),
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "unicache.redis.sentinel")
    ) {
        self.masterName = masterName
        self.sentinelTemplate = sentinelTemplate
        self.watchPingInterval = max(watchPingInterval, .milliseconds(10))
        self.minimumSwitchInterval = minimumSwitchInterval
        self.sentinels = NIOLockedValueBox(sentinels)
        self.eventLoopGroup = eventLoopGroup
        self.logger = logger
    }

    /// The Sentinels in the order they will be asked (the last that answered first).
    public var order: [RedisURL.Address] { sentinels.withLockedValue { $0 } }

    /// The primary's address as the first Sentinel that answers names it.
    public func primaryAddress() async throws(RedisNIOError) -> RedisURL.Address {
        var reasons: [String] = []
        for sentinel in order {
            do throws(RedisNIOError) {
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

    /// A command connection to the primary: discovered, connected, checked with `ROLE`. `node` turns the address
    /// into the data node's configuration (user, password, TLS, database). Throws when the node is not a master.
    public func connectToPrimary(
        _ node: @Sendable (RedisURL.Address) -> RedisConnectionConfiguration
    ) async throws -> RedisConnection {
        let address = try await primaryAddress()
        let connection = try await RedisConnection.connect(node(address), eventLoopGroup: eventLoopGroup, logger: logger)
        do {
            let role = try await connection.send(["ROLE"])
            if let error = role.serverError { throw error.answering("ROLE") }
            guard role.array?.first?.string == "master" else {
                throw RedisNIOError.unexpectedReply(
                    "\(address) is not a master (ROLE: \((role.array?.first?.string ?? "?").escapedForLog))")
            }
            return connection
        } catch {
            await connection.close()
            throw error
        }
    }

    private func ask(_ sentinel: RedisURL.Address) async throws(RedisNIOError) -> RedisURL.Address {
        let connection: RedisConnection
        do {
            connection = try await RedisConnection.connect(configuration(sentinel), eventLoopGroup: eventLoopGroup, logger: logger)
        } catch let error as RedisNIOError {
            throw error
        } catch {
            throw .connectFailed("\(error)")
        }
        let reply: RESPValue
        do {
            reply = try await connection.send(["SENTINEL", "get-master-addr-by-name", RESPArgument(masterName)])
        } catch {
            await connection.close()
            throw error
        }
        await connection.close()
        guard let pair = reply.array, pair.count == 2, let host = pair[0].string else {
            throw .unexpectedReply("the Sentinel does not know \(masterName) (\(reply.serverError?.prefix ?? "null"))")
        }
        return try .named(host: host, port: pair[1].int)
    }

    func configuration(_ sentinel: RedisURL.Address) -> RedisConnectionConfiguration {
        var configuration = sentinelTemplate
        configuration.host = sentinel.host
        configuration.port = sentinel.port
        configuration.database = 0
        return configuration
    }
}
