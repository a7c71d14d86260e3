import Logging
import NIOConcurrencyHelpers
import NIOCore
import NIOPosix

/// The primary of a Sentinel-watched group, found as Redis's "Sentinel clients" guidelines say: ask each Sentinel
/// in turn `SENTINEL get-master-addr-by-name NAME` (the first that answers wins and moves to the front), connect,
/// check `ROLE` says `master`. Ask again after a failed connection or a `READONLY` reply; `watch()` hears failovers.
public final class RedisSentinel: Sendable {
    public let masterName: String
    /// How each Sentinel is reached (its password, TLS, timeouts); the host and port are replaced per Sentinel.
    public let sentinelTemplate: RedisConnectionConfiguration
    private let sentinels: NIOLockedValueBox<[RedisURL.Address]>
    private let eventLoopGroup: any EventLoopGroup
    private let logger: Logger

    public init(
        sentinels: [RedisURL.Address], masterName: String, sentinelTemplate: RedisConnectionConfiguration,
        eventLoopGroup: any EventLoopGroup = MultiThreadedEventLoopGroup.singleton,
        logger: Logger = Logger(label: "unicache.redis.sentinel")
    ) {
        self.masterName = masterName
        self.sentinelTemplate = sentinelTemplate
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
            if let error = role.serverError { throw error }
            guard role.array?.first?.string == "master" else {
                throw RedisNIOError.unexpectedReply("\(address) is not a master (ROLE: \(role.array?.first?.string ?? "?"))")
            }
            return connection
        } catch {
            await connection.close()
            throw error
        }
    }

    /// Failovers of this group as one Sentinel announces them, from the first Sentinel that accepts the
    /// subscription: `+promoted-slave` (the replica answers as the primary; from this moment the Sentinels name it)
    /// and `+switch-master` (the failover's end, once the other replicas are told; the same switch again, or the
    /// only one heard when the promotion was missed). The stream finishes when that Sentinel's connection drops:
    /// watch again.
    public func watch() async throws -> RedisSentinelWatcher {
        var lastError: any Error = RedisNIOError.connectFailed("no Sentinel configured")
        for sentinel in order {
            do {
                let subscription = try await RedisSubscription.connect(configuration(sentinel), eventLoopGroup: eventLoopGroup)
                do {
                    try await subscription.subscribe(["+promoted-slave", "+switch-master"])
                } catch {
                    await subscription.close()
                    throw error
                }
                return RedisSentinelWatcher(subscription: subscription, masterName: masterName)
            } catch {
                lastError = error
            }
        }
        throw lastError
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
        guard let pair = reply.array, pair.count == 2, let host = pair[0].string, let port = pair[1].int else {
            throw .unexpectedReply("the Sentinel does not know \(masterName) (\(reply.serverError?.prefix ?? "null"))")
        }
        return RedisURL.Address(host: host, port: port)
    }

    private func configuration(_ sentinel: RedisURL.Address) -> RedisConnectionConfiguration {
        var configuration = sentinelTemplate
        configuration.host = sentinel.host
        configuration.port = sentinel.port
        configuration.database = 0
        return configuration
    }
}

/// A failover Sentinel announced: the group's primary moved from `old` to `new`.
public struct RedisSentinelSwitch: Sendable, Hashable {
    public var masterName: String
    public var old: RedisURL.Address
    public var new: RedisURL.Address

    public init(masterName: String, old: RedisURL.Address, new: RedisURL.Address) {
        self.masterName = masterName
        self.old = old
        self.new = new
    }

    /// Parses a `+switch-master` message (`NAME old-ip old-port new-ip new-port`) or a `+promoted-slave` one
    /// (`slave IP:PORT IP PORT @ NAME old-ip old-port`).
    init?(channel: String, payload: [UInt8]) {
        let words = String(decoding: payload, as: UTF8.self).split(separator: " ").map(String.init)
        switch channel {
        case "+switch-master":
            guard words.count == 5, let oldPort = Int(words[2]), let newPort = Int(words[4]) else { return nil }
            self.init(
                masterName: words[0], old: RedisURL.Address(host: words[1], port: oldPort),
                new: RedisURL.Address(host: words[3], port: newPort))
        case "+promoted-slave":
            guard words.count == 8, words[4] == "@", let newPort = Int(words[3]), let oldPort = Int(words[7]) else {
                return nil
            }
            self.init(
                masterName: words[5], old: RedisURL.Address(host: words[6], port: oldPort),
                new: RedisURL.Address(host: words[2], port: newPort))
        default:
            return nil
        }
    }
}

/// One Sentinel's announcements of this group's failovers (`+promoted-slave`, `+switch-master`).
public final class RedisSentinelWatcher: Sendable {
    /// Finishes when the Sentinel's connection drops.
    public let switches: AsyncStream<RedisSentinelSwitch>
    private let subscription: RedisSubscription

    init(subscription: RedisSubscription, masterName: String) {
        self.subscription = subscription
        let (stream, continuation) = AsyncStream.makeStream(of: RedisSentinelSwitch.self)
        switches = stream
        Task {
            for await message in subscription.messages {
                if let event = RedisSentinelSwitch(channel: message.channel, payload: message.payload),
                    event.masterName == masterName
                {
                    continuation.yield(event)
                }
            }
            continuation.finish()
        }
    }

    public func close() async {
        await subscription.close()
    }
}
