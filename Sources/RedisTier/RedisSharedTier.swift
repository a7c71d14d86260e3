import Foundation
import Logging
import RedisClient
import NIOConcurrencyHelpers
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
    public var fillPollInterval: Duration
    /// Command contexts in the pool.
    public var connections: Int

    public init(
        endpoint: RedisEndpoint, timeout: Duration = .milliseconds(50), prefix: String = "unicache:",
        leaseTime: Duration = .seconds(6), fillPollInterval: Duration = .milliseconds(100), connections: Int = 4
    ) {
        self.endpoint = endpoint
        self.timeout = timeout
        self.prefix = prefix
        self.leaseTime = leaseTime
        self.fillPollInterval = fillPollInterval
        self.connections = connections
    }
}

/// The fleet's shared tier on Redis: entries in the disk tier's verified format (sealed with a key ring, CONTRACT §9)
/// with an expiry covering their servable life, invalidations on one channel with a fleet-wide sequence number, and fill leases.
public final class RedisSharedTier: SharedTier {
    let configuration: RedisTierConfiguration
    let keys: RedisKeys
    /// Seals every value written with a key ring's primary; reads both forms.
    let codec: EntryCodec
    /// This instance in the fleet's messages (its own are ignored).
    let instanceID: String
    let pool: RedisCommandPool
    let counters = SharedTierCounters()
    let waiters = FillWaiters()
    let logger: Logger
    let sync = NIOLockedValueBox(SyncState())
    private let subscriber = NIOLockedValueBox<RedisSubscriber?>(nil)
    /// Instances announced in the fleet when last asked (1 until then): the fallback budgets divide by it.
    private let announcedFleet = NIOLockedValueBox(1)
    private let announcer = NIOLockedValueBox<Task<Void, Never>?>(nil)

    /// The fleet's size as last seen.
    public var fleetSize: Int { announcedFleet.withLockedValue { $0 } }

    var currentSubscriber: RedisSubscriber? { subscriber.withLockedValue { $0 } }

    /// Installs `new` and returns the previous subscriber (to stop outside the lock).
    func swapSubscriber(_ new: RedisSubscriber?) -> RedisSubscriber? {
        subscriber.withLockedValue { current in
            defer { current = new }
            return current
        }
    }

    /// Where this instance stands in the fleet's invalidation stream.
    struct SyncState {
        var handler: (@Sendable (SharedTierEvent) -> Void)?
        /// Highest sequence number seen on the channel (own messages included) and the epoch it belongs to.
        var epoch: String?
        var sequence = 0
        /// Set while the subscription is down: the position at the moment it was lost (`nil`: never known).
        var lost: (epoch: String?, sequence: Int)? = (nil, 0)
        /// Counts subscriptions and losses: a position check applies only to the subscription it was made for.
        var generation: UInt64 = 0
    }

    public init(configuration: RedisTierConfiguration, codec: EntryCodec = EntryCodec(), logger: Logger) {
        self.configuration = configuration
        self.codec = codec
        keys = RedisKeys(prefix: configuration.prefix)
        instanceID = Self.randomToken()
        pool = RedisCommandPool(
            endpoint: configuration.endpoint, timeout: configuration.timeout, size: configuration.connections)
        self.logger = logger
    }

    // MARK: Entries

    public func load(_ key: String) async throws(SharedTierUnavailable) -> CacheEntry? {
        let reply = try await run("get", ["GET", keys.entry(key)].map(Self.bytes))
        guard case .string(let bytes) = reply else {
            counters.miss()
            return nil
        }
        do throws(EntryFormatError) {
            let entry = try codec.decode(bytes, key: key)
            counters.hit()
            return entry
        } catch {
            await discard(key, value: bytes, reason: error)
            return nil
        }
    }

    /// Deletes a value that did not verify or open, unless another was written meanwhile, and counts it.
    func discard(_ key: String, value: [UInt8], reason: EntryFormatError) async {
        if reason.isUndecryptable {
            counters.undecryptable()
            logger.warning("shared tier: a sealed value that does not open was deleted", metadata: ["reason": "\(reason)"])
        } else {
            counters.corrupt()
            logger.warning("shared tier: a stored value did not verify; deleted", metadata: ["error": "\(reason)"])
        }
        _ = try? await run("delete", RedisScripts.release, keys: [keys.entry(key)], arguments: [value])
    }

    public func store(_ entry: CacheEntry) async throws(SharedTierUnavailable) {
        let value: [UInt8]
        do { value = try codec.encode(entry) } catch { throw SharedTierUnavailable(reason: "the value could not be sealed") }
        let life = max(1, Int((entry.staleUntil.timeIntervalSinceNow * 1000).rounded(.up)))
        let userIndex = entry.user.map(keys.userIndex) ?? keys.entry(entry.key)
        let arguments: [[UInt8]] =
            [value]
            + [
                "\(life)", entry.key, entry.namespace, entry.user == nil ? "0" : "1", keys.channel, instanceID,
            ].map(Self.bytes)
        _ = try await run("store", RedisScripts.store, keys: [keys.entry(entry.key), userIndex, keys.sequence], arguments: arguments)
        counters.sent()
    }

    public func invalidate(_ scope: SharedScope) async throws(SharedTierUnavailable) -> [String] {
        let body = InvalidationMessage.body(scope)
        let removed: [String]
        switch scope {
        case .key(let key):
            let reply = try await run(
                "invalidate",
                RedisScripts.delete, keys: [keys.sequence, keys.entry(key)], arguments: [keys.channel, instanceID, body])
            removed = reply == .integer(1) ? [key] : []
        case .user(let user):
            removed = try await deleteUser(user, namespaces: nil, body: body)
        case .namespaces(let namespaces, let user):
            removed = try await deleteUser(user, namespaces: namespaces, body: body)
        case .prefix(let prefix):
            removed = try await deleteScanned(pattern: keys.entryPattern(keyPrefix: prefix), body: body)
        case .all:
            removed = try await deleteScanned(pattern: keys.entryPattern(keyPrefix: ""), body: body)
        }
        counters.sent()
        return removed
    }

    private func deleteUser(_ user: String, namespaces: Set<String>?, body: String) async throws(SharedTierUnavailable)
        -> [String]
    {
        let filter = namespaces.map { "," + $0.sorted().joined(separator: ",") + "," } ?? ""
        let reply = try await run(
            "invalidate",
            RedisScripts.deleteUser, keys: [keys.userIndex(user), keys.sequence],
            arguments: [keys.prefix, keys.channel, instanceID, body, filter])
        guard case .array(let items) = reply else { return [] }
        return items.compactMap { if case .string(let bytes) = $0 { String(decoding: bytes, as: UTF8.self) } else { nil } }
    }

    /// Prefix and full deletes: SCAN for the entries (never the tier's own keys), delete them in batches, then
    /// announce (the announcement goes out even when nothing was found: other instances may hold copies).
    private func deleteScanned(pattern: String, body: String) async throws(SharedTierUnavailable) -> [String] {
        let found = try await scanEntries(pattern: pattern)
        var removed: [String] = []
        var start = 0
        repeat {
            let batch = Array(found[start..<min(found.count, start + 500)])
            start += 500
            let isLast = start >= found.count
            // The last batch (or the only, empty one) also announces.
            if isLast {
                _ = try await run(
                    "invalidate", RedisScripts.delete, keys: [keys.sequence] + batch,
                    arguments: [keys.channel, instanceID, body])
            } else {
                _ = try await run("invalidate", (["DEL"] + batch).map(Self.bytes))
            }
            removed += batch.map { String($0.dropFirst(keys.prefix.count)) }
        } while start < found.count
        return removed
    }

    /// The Redis names of the entries matching `pattern` (SCAN; never the tier's own keys).
    func scanEntries(pattern: String) async throws(SharedTierUnavailable) -> [String] {
        var cursor = "0"
        var found: [String] = []
        repeat {
            let reply = try await run("scan", ["SCAN", cursor, "MATCH", pattern, "COUNT", "1000"].map(Self.bytes))
            guard case .array(let parts) = reply, parts.count == 2, case .string(let next) = parts[0],
                case .array(let names) = parts[1]
            else { throw SharedTierUnavailable(reason: "unexpected SCAN reply") }
            cursor = String(decoding: next, as: UTF8.self)
            for case .string(let name) in names {
                let name = String(decoding: name, as: UTF8.self)
                if !name.hasPrefix(keys.internalPrefix) { found.append(name) }
            }
        } while cursor != "0"
        return found
    }

    // MARK: Fill leases

    public func claimFill(_ key: String) async -> FillClaim {
        let token = Self.randomToken()
        let milliseconds = configuration.leaseTime.components.seconds * 1000
            + configuration.leaseTime.components.attoseconds / 1_000_000_000_000_000
        do {
            let reply = try await run(
                "lease", ["SET", keys.lock(key), token, "NX", "PX", "\(max(1, milliseconds))"].map(Self.bytes))
            return reply == .status("OK") ? .leader(token: token) : .follower
        } catch {
            return .unavailable
        }
    }

    public func releaseFill(_ key: String, token: String) async {
        _ = try? await run("lease", RedisScripts.release, keys: [keys.lock(key)], arguments: [token])
    }

    public func awaitFill(_ key: String) async -> CacheEntry? {
        let deadline = ContinuousClock.now + configuration.leaseTime
        while ContinuousClock.now < deadline {
            await waiters.wait(for: key, atMost: min(configuration.fillPollInterval, deadline - .now))
            do {
                if let entry = try await load(key) { return entry }
                let held = try await run("lease", ["EXISTS", keys.lock(key)].map(Self.bytes))
                if held != .integer(1) { return nil }
            } catch {
                return nil
            }
        }
        return nil
    }

    // MARK: Fleet membership

    /// Announces this instance every second (each announcement lives three); the reply is the fleet's size.
    func startAnnouncing() {
        let task = Task { [weak self] in
            while !Task.isCancelled {
                guard let self else { return }
                if case .integer(let size)? = try? await self.run(
                    "announce",
                    RedisScripts.announce, keys: [self.keys.instances], arguments: [self.instanceID, "3000"])
                {
                    self.announcedFleet.withLockedValue { $0 = max(1, size) }
                }
                try? await Task.sleep(for: .seconds(1))
            }
        }
        announcer.withLockedValue { $0 = task }
    }

    func stopAnnouncing() {
        announcer.withLockedValue { current in
            current?.cancel()
            current = nil
        }
    }

    // MARK: Commands

    /// One command through the pool, counted; an error reply or a failure is `SharedTierUnavailable`.
    func run(_ operation: String, _ arguments: [[UInt8]]) async throws(SharedTierUnavailable) -> RedisReply {
        try counted(operation, try await send(operation, arguments))
    }

    /// `script` over `keys` and `arguments` by its digest; sent once more with its text when Redis answers that
    /// it does not have it (`NOSCRIPT`: Redis restarted, or its script cache was flushed).
    func run(
        _ operation: String, _ script: RedisScript, keys: [String], arguments: [[UInt8]]
    ) async throws(SharedTierUnavailable) -> RedisReply {
        let keys = keys.map(Self.bytes)
        let reply = try await send(operation, script.command(keys: keys, arguments: arguments))
        if case .error(let message) = reply, message.hasPrefix("NOSCRIPT") {
            return try await run(operation, script.command(keys: keys, arguments: arguments, loading: true))
        }
        return try counted(operation, reply)
    }

    /// `script` with arguments that are all text.
    func run(
        _ operation: String, _ script: RedisScript, keys: [String], arguments: [String]
    ) async throws(SharedTierUnavailable) -> RedisReply {
        try await run(operation, script, keys: keys, arguments: arguments.map(Self.bytes))
    }

    /// The pool's answer; a failure to get one is counted and `SharedTierUnavailable`.
    private func send(_ operation: String, _ arguments: [[UInt8]]) async throws(SharedTierUnavailable) -> RedisReply {
        do throws(RedisError) {
            return try await pool.command(arguments)
        } catch {
            counters.operation(operation, "error")
            switch error {
            case .unavailable(let reason): throw SharedTierUnavailable(reason: reason)
            }
        }
    }

    /// Counts `reply`; an error reply is `SharedTierUnavailable`.
    private func counted(_ operation: String, _ reply: RedisReply) throws(SharedTierUnavailable) -> RedisReply {
        if case .error(let message) = reply {
            counters.operation(operation, "error")
            logger.warning("shared tier: Redis refused a command", metadata: ["operation": "\(operation)", "error": "\(message)"])
            throw SharedTierUnavailable(reason: "Redis answered an error to \(operation)")
        }
        counters.operation(operation, "ok")
        return reply
    }

    static func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    static func randomToken() -> String {
        var generator = SystemRandomNumberGenerator()
        return String(generator.next() as UInt64, radix: 36) + String(generator.next() as UInt64, radix: 36)
    }

    // MARK: Statistics

    public func statistics() -> SharedTierStatistics {
        // Connected means in step with the fleet: subscribed, and the position checked since.
        let connected = pool.isAvailable && (currentSubscriber?.isConnected ?? false) && sync.withLockedValue { $0.lost == nil }
        var statistics = counters.snapshot(connected: connected, state: connected ? nil : unavailableReason)
        statistics.instances = fleetSize
        return statistics
    }

    /// Why the tier is not connected (never the password).
    var unavailableReason: String {
        if let error = pool.lastError { return "unreachable: \(error)" }
        return "unreachable: the invalidation channel is not subscribed"
    }
}
