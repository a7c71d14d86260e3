import Clocks
import Foundation
import Logging
import NIOConcurrencyHelpers
import Redis
import UnifiedCache

/// What the shared tier needs to know (CONTRACT §6).
public struct RedisTierConfiguration: Sendable {
    public var endpoint: RedisEndpoint
    /// `--redis-timeout`: the bound of one command.
    public var timeout: Duration
    /// `--redis-prefix`.
    public var prefix: String
    /// How long a fill lease lasts: the upstream timeout and a margin (a waiter fetches itself after it).
    public var leaseTime: Duration
    /// How often a waiter asks Redis when no message came (a lost message costs this much, not a fetch).
    package var fillPollInterval: Duration
    /// Connections of the node client.
    public var connections: Int
    /// About how many changes the fleet's invalidation log keeps (`XADD … MAXLEN ~`: at least this many), every
    /// invalidation and every newly stored value counted. An instance away for fewer changes than this catches up;
    /// one away longer drops its local entries.
    package var logLength: Int
    /// Log entries read and applied per step of a catch-up (its checkpoint advances after each step).
    package var catchUpBatch: Int
    /// Where this instance keeps its log checkpoint across restarts (in its disk tier's folder), `nil` without a
    /// disk tier: then a restart starts empty anyway, and reconnections still catch up from the checkpoint in memory.
    public var checkpointFile: String?
    /// How often the checkpoint is written while in step (and once more at stop).
    package var checkpointInterval: Duration
    /// On a Redis Cluster (`RedisEndpoint.Target.cluster`): how many shards the fleet's keys are divided into, each
    /// under one hash tag with its own log, epoch and channel (CONTRACT §13). Fixed for a fleet: every instance of one
    /// must use the same. Ignored on one Redis (one shard).
    public var clusterShards: Int = RedisTierConfiguration.defaultClusterShards
    /// Keys that name a user by their shape (the app's read-through keys): erasing a user also removes the entries
    /// stored under them without a user (raw entries stored before such puts were refused), which no user index finds.
    public var userKeys = UserKeys()
    /// On a Redis Cluster: how often the slot map is read again when nothing else has read it (a replica added, or not
    /// yet attached when the map was read; a slot moved that no command met). While a shard's primary is down it is
    /// read every second.
    package var clusterMapRefresh: Duration = .seconds(60)

    package static let defaultClusterShards = 16

    public init(
        endpoint: RedisEndpoint, timeout: Duration = .milliseconds(50), prefix: String = "unicache:",
        leaseTime: Duration = .seconds(6), fillPollInterval: Duration = .milliseconds(100), connections: Int = 4,
        logLength: Int = 100_000, catchUpBatch: Int = 1_000, checkpointFile: String? = nil,
        checkpointInterval: Duration = .seconds(1)
    ) {
        self.endpoint = endpoint
        self.timeout = timeout
        self.prefix = prefix
        self.leaseTime = leaseTime
        self.fillPollInterval = fillPollInterval
        self.connections = connections
        self.logLength = logLength
        self.catchUpBatch = max(1, catchUpBatch)
        self.checkpointFile = checkpointFile
        self.checkpointInterval = checkpointInterval
    }
}

/// The fleet's shared tier on Redis: entries in the disk tier's verified format (sealed with a key ring, CONTRACT §9)
/// with an expiry covering their servable life, invalidations on one channel and in the fleet's log (a Redis stream
/// an instance catches up from after a loss or a restart), and fill leases.
public final class RedisSharedTier: SharedTier {
    let configuration: RedisTierConfiguration
    /// The commands to Redis, counted, and this instance's id in the fleet's messages (its own are ignored).
    public let commands: RedisCommands
    /// This instance's announcements and the fleet's size they return.
    public let membership: FleetMembership
    let keys: RedisKeys
    /// What every change this instance announces starts with: the message format and this instance's id.
    let messageHead: String
    /// Seals every value written with a key ring's primary; reads both forms.
    let codec: EntryCodec
    /// The wall clock an entry's remaining life in Redis is counted from.
    let clock: any WallClock
    /// The process's monotonic clock, given to the subscribers the tier makes (their pings and back-off).
    let ticker: any Clock<Duration>
    /// Readings of it: a fill's wait, a stop's wait for the log's last changes, a catch-up's length.
    let elapsed: Elapsed
    let waiters: FillWaiters
    let logger: Logger
    let hooks = NIOLockedValueBox(EventHooks())
    /// One on one Redis; a cluster's shards, each with its own log position and subscriber.
    let shards: [ShardSync]
    /// The shards' first catch-ups since start-up, logged as one line on a cluster.
    let firstCatchUps: NIOLockedValueBox<FirstCatchUps>
    /// The checkpoint across restarts, with the disk tier.
    let checkpointFile: LogPositionFile?
    /// The tickets of the checkpoint's saves: the last issued (with its snapshot) and the last written.
    let checkpointWrites = NIOLockedValueBox((issued: UInt64(0), written: UInt64(0)))
    /// On a cluster, the refusals met by the shards' subscriptions (on one node, its client's failures count them).
    let subscriptionFailures = RedisConnectFailures()
    /// Told each time a shard's channel is lost: `followLogs` waits on it while every channel is up.
    let channelLosses = AsyncStream.makeStream(of: Void.self, bufferingPolicy: .bufferingNewest(1))

    /// `clock`: the process's wall clock, from which a stored entry's remaining life is counted; `ticker`: its
    /// monotonic clock, for the tier's waits and the Redis link's breakers and Sentinel watch.
    public init(
        configuration: RedisTierConfiguration, codec: EntryCodec = EntryCodec(), clock: any WallClock,
        ticker: any Clock<Duration>, logger: Logger
    ) {
        self.configuration = configuration
        self.codec = codec
        self.clock = clock
        self.ticker = ticker
        elapsed = Elapsed(ticker)
        waiters = FillWaiters(clock: ticker)
        commands = RedisCommands(configuration: configuration, clock: ticker, logger: logger)
        membership = FleetMembership(commands: commands, elapsed: elapsed)
        keys = commands.keys
        messageHead = InvalidationMessage.head(origin: commands.instanceID)
        self.logger = logger
        let count = commands.keys.shards
        checkpointFile = configuration.checkpointFile.map { LogPositionFile(path: $0, shards: count) }
        let saved = checkpointFile?.loadShards() ?? [:]
        shards = (0..<count).map { ShardSync(index: $0, applied: saved[$0]) }
        firstCatchUps = NIOLockedValueBox(FirstCatchUps(shards: count))
    }

    // MARK: Entries

    public func load(_ key: String) async throws(SharedTierUnavailable) -> CacheEntry? {
        let name = keys.entry(key)
        let reply = try await commands.run("get", .get(name), key: name)
        guard case .string(let bytes) = reply else {
            commands.counters.miss()
            return nil
        }
        return await opened(bytes, key: key)
    }

    /// The look and the fill claim as one script, one round trip; a stored value that does not open is deleted and
    /// the lease then claimed on its own.
    public func lookUp(_ key: String) async -> SharedLookup {
        let token = RedisCommands.randomToken()
        let reply: RedisReply
        do {
            reply = try await commands.run(
                "lookup", RedisScripts.lookUp, keys: [keys.entry(key), keys.lock(key)],
                arguments: [token, "\(leaseMilliseconds)"])
        } catch {
            return .claimed(.unavailable)
        }
        switch FoundOrCode(reply) {
        case nil:
            return .claimed(.unavailable)
        case .found(let bytes):
            if let entry = await opened(bytes, key: key) { return .found(entry) }
            return .claimed(await claimFill(key))
        case .code(2):
            commands.counters.miss()
            return .claimed(.leader(token: token))
        default:
            commands.counters.miss()
            return .claimed(.follower)
        }
    }

    /// A stored value opened and counted as a hit; one that does not verify or open is deleted, counted, and nil.
    private func opened(_ bytes: [UInt8], key: String) async -> CacheEntry? {
        do throws(EntryFormatError) {
            let entry = try codec.decode(bytes, key: key)
            commands.counters.hit()
            return entry
        } catch {
            await discard(key, value: bytes, reason: error)
            return nil
        }
    }

    /// `load` on the Redis worker that got the reply, without a task (see `SharedTier.loadNow`).
    public func loadNow(_ key: String, for read: any SharedReadNow) -> Bool {
        // While the breaker refuses commands, `load` alone meets (and counts) the refusal. On a cluster the GET goes
        // to the primary the map names for the key's slot, as `load`'s would: one round trip, as on one Redis.
        let head = keys.entryHead(key)
        guard let node = commands.link.nodeNow(forKey: head, key), node.isAvailable else { return false }
        let counters = commands.counters
        node.send(.get(head, key)) { [codec] reply in
            // A slot that moved since the map was read: not this read's to follow. Answered as absent, the load
            // that follows looks the key up through the cluster client, which follows the redirection and counts it.
            if case .success(let got) = reply, let kind = got.errorReply?.kind, kind == .moved || kind == .ask {
                return read.answer(nil)
            }
            guard case .success(.string(let bytes)) = reply, let entry = try? codec.decode(bytes, key: key),
                read.accept(entry)
            else {
                counters.operation("get", RedisCommands.result(reply))
                return read.answer(nil)
            }
            counters.servedGet()
            read.answer(entry)
        }
        return true
    }

    /// Deletes a value that did not verify or open, unless another was written meanwhile, and counts it.
    func discard(_ key: String, value: [UInt8], reason: EntryFormatError) async {
        if reason.isUndecryptable {
            commands.counters.undecryptable()
            logger.warning("shared tier: a sealed value that does not open was deleted", metadata: ["reason": "\(reason)"])
        } else {
            commands.counters.corrupt()
            logger.warning("shared tier: a stored value did not verify; deleted", metadata: ["error": "\(reason)"])
        }
        _ = try? await commands.run("delete", RedisScripts.release, keys: [keys.entry(key)], arguments: [value])
    }

    public func store(_ entry: CacheEntry) async throws(SharedTierUnavailable) {
        try await store(entry, releasing: nil, announcing: .put)
    }

    public func storeFetched(_ entry: CacheEntry, releasing token: String?) async throws(SharedTierUnavailable) {
        try await store(entry, releasing: token, announcing: .fetched)
    }

    /// The store script gives the lease back in the same step and announces the change as `kind`.
    private func store(_ entry: CacheEntry, releasing token: String?, announcing kind: InvalidationMessage.StoreKind)
        async throws(SharedTierUnavailable)
    {
        let value: [UInt8]
        do { value = try codec.encode(entry) } catch { throw SharedTierUnavailable(reason: "the value could not be sealed") }
        let life = max(1, Int((entry.staleUntil.timeIntervalSince(clock.now()) * 1000).rounded(.up)))
        let shard = keys.shard(of: entry.key)
        let userIndex = entry.user.map { keys.userIndex($0, shard: shard) } ?? keys.entry(entry.key)
        let arguments: [[UInt8]] =
            [value]
            + [
                "\(life)", entry.key, entry.namespace, entry.user == nil ? "0" : "1", keys.channel(shard), messageHead,
                "\(configuration.logLength)", token ?? "", InvalidationMessage.change(storing: entry.key, as: kind),
            ].map(RedisCommands.bytes)
        _ = try await commands.run(
            "store", RedisScripts.store.on(keys),
            keys: [keys.entry(entry.key), userIndex, keys.log(shard), keys.lock(entry.key)], arguments: arguments)
        commands.counters.sent()
    }

    public func invalidate(_ scope: SharedScope) async throws(SharedTierUnavailable) -> [String] {
        let change = InvalidationMessage.change(scope)
        let removed: [String]
        switch scope {
        case .key(let key):
            let shard = keys.shard(of: key)
            let reply = try await commands.run(
                "invalidate",
                RedisScripts.delete.on(keys), keys: [keys.log(shard), keys.entry(key)],
                arguments: [keys.channel(shard), messageHead, change, "\(configuration.logLength)"])
            removed = reply == .integer(1) ? [key] : []
        case .user(let user):
            // Unannounced: the user's announcement below makes every instance drop the keys naming the user too.
            let unindexed = try await deleteUnindexed(namingUser: user)
            removed = unindexed + (try await deleteUser(user, namespaces: nil, change: change))
        case .namespaces(let namespaces, let user):
            removed = try await deleteUser(user, namespaces: namespaces, change: change)
        case .prefix(let prefix):
            removed = try await deleteScanned(keyPrefix: prefix, change: change)
        case .all:
            removed = try await deleteScanned(keyPrefix: "", change: change)
        }
        commands.counters.sent()
        return removed
    }

    // MARK: Fill leases

    public func claimFill(_ key: String) async -> FillClaim {
        let token = RedisCommands.randomToken()
        do {
            let lock = keys.lock(key)
            let reply = try await commands.run(
                "lease", .setIfAbsent(lock, token, expiringAfter: leaseMilliseconds), key: lock)
            return reply == .status("OK") ? .leader(token: token) : .follower
        } catch {
            return .unavailable
        }
    }

    /// A fill lease's life in Redis, whole milliseconds, at least 1.
    private var leaseMilliseconds: UInt64 {
        max(1, configuration.leaseTime.wholeMillisecondsRoundedUp)
    }

    /// Renews the lease every half of its life until cancelled, or until Redis says it is not this holder's (a
    /// renewal Redis does not answer is tried again at the next one).
    public func holdFill(_ key: String, token: String) async {
        let lock = keys.lock(key)
        while true {
            do { try await elapsed.sleep(for: configuration.leaseTime / 2) } catch { return }
            let reply = try? await commands.run(
                "lease", RedisScripts.renew, keys: [lock], arguments: [token, String(leaseMilliseconds)])
            if reply == .integer(0) { return }
        }
    }

    public func releaseFill(_ key: String, token: String) async {
        _ = try? await commands.run("lease", RedisScripts.release, keys: [keys.lock(key)], arguments: [token])
    }

    public func awaitFill(_ key: String) async -> CacheEntry? {
        let deadline = elapsed.now() + configuration.leaseTime
        while elapsed.now() < deadline {
            // Armed before looking: a fill announced while Redis is asked wakes the wait below at once.
            let ticket = waiters.arm(key)
            if case .over(let entry) = await lookForFill(key) {
                waiters.disarm(ticket)
                return entry
            }
            await waiters.wait(ticket, atMost: min(configuration.fillPollInterval, deadline - elapsed.now()))
        }
        return nil
    }

    /// What one look in Redis says of a fill another instance leads.
    private enum FillLook {
        /// The value is stored (or, with nil, the lease is gone or Redis cannot be asked): waiting is over.
        case over(CacheEntry?)
        /// No value yet and the lease still held.
        case pending
    }

    private func lookForFill(_ key: String) async -> FillLook {
        let reply: RedisReply
        do {
            reply = try await commands.run(
                "lease", RedisScripts.lookForFill, keys: [keys.entry(key), keys.lock(key)], arguments: [String]())
        } catch {
            return .over(nil)
        }
        switch FoundOrCode(reply) {
        case nil: return .over(nil)
        case .found(let bytes): return .over(await opened(bytes, key: key))
        case .code(let code):
            commands.counters.miss()
            return code == 2 ? .pending : .over(nil)
        }
    }

    /// What the look-up scripts answer: `{1, value}` when the value is stored, else `{code}` (nil: another reply).
    private enum FoundOrCode {
        case found([UInt8])
        case code(Int)

        init?(_ reply: RedisReply) {
            guard case .array(let items) = reply, case .integer(let code)? = items.first else { return nil }
            if code == 1 {
                guard items.count == 2, case .string(let bytes) = items[1] else { return nil }
                self = .found(bytes)
            } else {
                self = .code(code)
            }
        }
    }

    // MARK: Statistics

    public func statistics() -> SharedTierStatistics {
        // Connected means in step with the fleet: subscribed, and the log caught up (or the tiers reset) since, on
        // every shard.
        let connected = commands.link.isAvailable && shards.allSatisfy(\.inStep)
        var statistics = commands.counters.snapshot(connected: connected, state: connected ? nil : unavailableReason)
        statistics.instances = membership.size
        statistics.tls = commands.link.endpoint.tls != nil
        switch commands.link {
        case .node(let node):
            statistics.endpoint = node.primary
            statistics.failovers = node.failovers
            statistics.tlsErrors = node.connectFailures.tls
            statistics.authErrors = node.connectFailures.authentication
        case .cluster(let cluster):
            statistics.endpoint = "\(cluster.endpoint)"
            let failures = cluster.connectFailureCounts
            statistics.tlsErrors = failures.tls + subscriptionFailures.tls
            statistics.authErrors = failures.authentication + subscriptionFailures.authentication
            let map = cluster.statistics
            statistics.cluster = SharedTierStatistics.Cluster(
                nodes: map.nodes, slotsCovered: map.slotsCovered, moved: map.moved, ask: map.ask,
                mapRefreshes: map.mapRefreshes)
        }
        return statistics
    }

    /// Until the first catch-up (or reset) of every shard since start-up, the disk's entries from before it wait,
    /// unless Redis cannot be asked (its breaker is open): then they answer, as a lone instance's would.
    public var vouchesForStoredEntries: Bool {
        shards.allSatisfy { $0.state.withLockedValue { $0.vouched } } || !commands.link.isAvailable
    }

    /// Why the tier is not connected (never the password).
    var unavailableReason: String {
        if let error = commands.link.node?.lastError { return "unreachable: \(error)" }
        if shards.count == 1 { return "unreachable: the invalidation channel is not subscribed" }
        let lost = shards.filter { !$0.isConnected }.count
        if lost == 0 { return "catching up with the fleet's log" }
        return "unreachable: \(lost) of \(shards.count) shards' invalidation channels are not subscribed"
    }
}
