import Foundation

/// The hook for a tier shared by a fleet of instances (Redis), consulted after memory and disk and before a
/// fetch. Unlike `SecondTier` it is not a write-behind copy of this instance's entries: it is where the fleet
/// meets, so it also carries the fleet's invalidations and its fill leases (one fetch per key for the fleet).
///
/// It is advisory: every method either answers or says it could not (`SharedTierUnavailable`, `.unavailable`),
/// and the manager then goes on with its local tiers and the upstream.
///
/// Class-bound: a tier is one object, and the manager's copy of it is a retain (an opaque existential's copy, through
/// its value witnesses, was ~190 instructions on every look).
public protocol SharedTier: AnyObject, Sendable {
    /// The verified entry stored for `key`, or `nil`. A stored value that does not verify is deleted, counted and
    /// reported as `nil`.
    func load(_ key: String) async throws(SharedTierUnavailable) -> CacheEntry?
    /// `load` for a caller without a task (a shared hit answered from the HTTP thread): false when not offered.
    /// Else, on any thread, a verified entry is offered to `read.accept`, and `read.answer` is called once: with the
    /// entry when `accept` took it (it counts as a hit first), or with `nil` for anything else (a miss, a value that
    /// does not verify, the tier unavailable, an entry not taken), which is neither counted nor acted on: `load`
    /// decides it.
    func loadNow(_ key: String, for read: any SharedReadNow) -> Bool
    /// Stores `entry` (a raw put) for its servable life and tells the fleet that any older copy of its key is gone
    /// and that loads in flight for the key must not store theirs (`SharedTierEvent.invalidate`).
    func store(_ entry: CacheEntry) async throws(SharedTierUnavailable)
    /// Stores a newly fetched value (a fill, a refresh) for its servable life and tells the fleet that it replaces
    /// older copies (`SharedTierEvent.replaced`: other instances' loads in flight still store their own fetch).
    /// Gives the fill lease `token` back in the same step when there is one (the leader's fetch is over); the lease
    /// is then not released again, even when the store fails (it expires).
    func storeFetched(_ entry: CacheEntry, releasing token: String?) async throws(SharedTierUnavailable)
    /// Removes the entries `scope` covers and tells the fleet to drop them; the keys removed from the shared tier.
    func invalidate(_ scope: SharedScope) async throws(SharedTierUnavailable) -> [String]
    /// On a local miss: the verified copy of `key` (fresh or not: the caller judges), or, when there is none, the
    /// fill lease claimed in the same round trip (CONTRACT §10.4). A tier that cannot be asked answers
    /// `.claimed(.unavailable)`.
    func lookUp(_ key: String) async -> SharedLookup
    /// Claims the fleet's fill lease of `key`: the leader fetches, a follower waits for its value.
    func claimFill(_ key: String) async -> FillClaim
    /// Gives a lease back (the leader's fetch is over, stored or not).
    func releaseFill(_ key: String, token: String) async
    /// Keeps the fill lease `token` of `key` while the leader's fetch lasts, which may outlast the lease (a wait for
    /// a slot under the upstream's cap is bounded by the request's deadline, not the lease): returns once the task is
    /// cancelled (the fetch is over) or the lease is no longer this holder's.
    func holdFill(_ key: String, token: String) async
    /// Waits until another instance fills `key` and returns its value; `nil` when the lease ended without one,
    /// the lease expired or the shared tier cannot be asked (the caller then fetches itself).
    func awaitFill(_ key: String) async -> CacheEntry?
    /// Where the fleet's events go (other instances' invalidations, and resets after missed ones) once `run` runs.
    /// `settled` returns once every event delivered so far has reached the local tiers (disk removals included):
    /// the tier claims a change applied, across a restart, only after it.
    func start(events: @escaping @Sendable (SharedTierEvent) -> Void, settled: @escaping @Sendable () async -> Void)
    /// The tier's own work (the subscription to the fleet's events, its membership, its checkpoints), in the calling
    /// task until that task is cancelled; then it stops delivering events and closes its connections.
    func run() async
    /// Before a graceful stop ends `run`: waits, bounded, until the changes announced so far (this instance's own
    /// among them) are applied, so that what `run` records last for a restart covers them.
    func catchUpBeforeStop() async
    /// Counters for /stats and metrics.
    func statistics() -> SharedTierStatistics
    /// Re-seals under the key ring's primary every shared entry that is not (CONTRACT §9.3), never overwriting a
    /// value written meanwhile; entries that do not open are deleted.
    func rekey() async throws(SharedTierUnavailable) -> RekeyReport
    /// Whether the entries the second tier stored before start-up may be served: `false` from start-up until the
    /// fleet's changes missed while the instance was down are applied (or the local tiers reset), unless the shared
    /// tier cannot be asked (then the local tiers answer, CONTRACT §6.5).
    var vouchesForStoredEntries: Bool { get }
}

extension SharedTier {
    /// A tier serving one instance: no other instance waits on its leases.
    public func holdFill(_ key: String, token: String) async {}

    /// A look, then a claim: two round trips where a tier cannot make them one.
    public func lookUp(_ key: String) async -> SharedLookup {
        do throws(SharedTierUnavailable) {
            if let entry = try await load(key) { return .found(entry) }
        } catch {
            return .claimed(.unavailable)
        }
        return .claimed(await claimFill(key))
    }

    /// A store, then the release: for a tier that serves one instance, where no other instance has loads in flight.
    public func storeFetched(_ entry: CacheEntry, releasing token: String?) async throws(SharedTierUnavailable) {
        do throws(SharedTierUnavailable) {
            try await store(entry)
        } catch {
            if let token { await releaseFill(entry.key, token: token) }
            throw error
        }
        if let token { await releaseFill(entry.key, token: token) }
    }

    /// Without a way to read but in a task, every shared read goes through `load`.
    public func loadNow(_ key: String, for read: any SharedReadNow) -> Bool { false }

    /// A shared tier that stores nothing at rest has nothing to re-seal.
    public func rekey() async throws(SharedTierUnavailable) -> RekeyReport { RekeyReport() }

    /// A shared tier that keeps no log of changes has nothing to wait for.
    public var vouchesForStoredEntries: Bool { true }

    /// Nor anything to catch up with before it stops.
    public func catchUpBeforeStop() async {}
}

/// A read of the shared tier without a task (`SharedTier.loadNow`), on the thread that gets the reply: one object
/// that is offered the entry and told the outcome, so that the read carries one reference to its end rather than a
/// closure per step (each a context allocated on the HTTP thread and freed on the reply's).
public protocol SharedReadNow: AnyObject, Sendable {
    /// Whether the verified `entry` is taken (it then counts as a hit).
    func accept(_ entry: CacheEntry) -> Bool
    /// Called once: with the entry `accept` took, or with `nil` for anything else.
    func answer(_ entry: CacheEntry?)
}

/// Which entries a fleet-wide invalidation covers.
public enum SharedScope: Sendable, Equatable {
    case key(String)
    case prefix(String)
    /// `user`'s entries of these namespaces (events).
    case namespaces(Set<String>, user: String)
    case user(String)
    case all
}

/// What the shared tier tells an instance.
public enum SharedTierEvent: Sendable, Equatable {
    /// Another instance changed or removed these entries: drop the local copies, and loads in flight for them do
    /// not store what they fetched (it may predate the change).
    case invalidate(SharedScope)
    /// Another instance stored a newly fetched value of this key (a fill, a refresh, an expiry): drop the local
    /// copies, which it replaces. A load in flight here for the key still stores its own fetch: both are answers of
    /// the upstream since the key's last change, and a refresh on this instance must replace it fleet-wide (CONTRACT
    /// §6.4).
    case replaced(String)
    /// Invalidations may have been missed and the fleet's log cannot say which (Redis restarted empty, the log no
    /// longer reaches back to this instance's position, or a change came in a form this instance cannot read): no
    /// local entry stored before may be served without asking the fleet again.
    case reset
    /// As `reset`, for the entries of one shard only (a fleet on Redis Cluster: that shard's log cannot vouch).
    case resetShard(SharedShard)
}

/// What one look at the shared tier on a local miss says.
public enum SharedLookup: Sendable {
    /// The shared tier's verified copy, fresh or not; no lease was claimed.
    case found(CacheEntry)
    /// No copy: the fill lease, claimed in the same round trip.
    case claimed(FillClaim)
}

/// The answer to a fill-lease claim.
public enum FillClaim: Sendable, Equatable {
    /// This instance fetches; release the lease with `token` afterwards.
    case leader(token: String)
    /// Another instance holds the lease: wait for its value.
    case follower
    /// The shared tier cannot be asked: fetch locally (still coalesced locally).
    case unavailable
}

/// The shared tier did not take an operation: it could not be asked (down, slow, or its breaker is open), or it
/// answered with an error (a command the ACL user's rules refuse, say).
public struct SharedTierUnavailable: Error, Sendable, Equatable {
    public var reason: String
    /// When to try again (the breaker's back-off), whole seconds, at least 1.
    public var retryAfterSeconds: Int

    public init(reason: String, retryAfterSeconds: Int = 1) {
        self.reason = reason
        self.retryAfterSeconds = max(1, retryAfterSeconds)
    }
}

/// Why an invalidation or erasure is not acknowledged: the rest of it was done, and retrying is safe.
public enum InvalidationIncomplete: Error, Sendable, Equatable {
    /// The second tier (disk) kept entries it was asked to remove (why: `SecondTierRemoval.failure`), and the shared
    /// tier could not be asked either, if `shared`.
    case secondTier(String, shared: SharedTierUnavailable?)
    /// The shared tier could not be asked: the other instances were not told (every local tier was done).
    case shared(SharedTierUnavailable)
}

/// What the tiers could not do during one invalidation, noted as it goes.
struct InvalidationFailures {
    var secondTier: String?
    var shared: SharedTierUnavailable?

    /// What was not done, if some tier failed.
    var incomplete: InvalidationIncomplete? {
        if let secondTier { return .secondTier(secondTier, shared: shared) }
        return shared.map { .shared($0) }
    }

    /// Throws when some tier failed.
    func check() throws(InvalidationIncomplete) {
        if let incomplete { throw incomplete }
    }
}

/// The shared tier's counters (CONTRACT §6.7).
public struct SharedTierStatistics: Sendable, Equatable {
    public var connected: Bool
    public var hits: Int
    public var misses: Int
    public var errors: Int
    public var corrupt: Int
    /// Sealed values that did not open (CONTRACT §9.2): deleted, never served.
    public var undecryptable: Int = 0
    public var invalidationsSent: Int
    public var invalidationsReceived: Int
    /// Commands by operation (`get`, `store`, `invalidate`, `lease`, `publish`…) and result (`ok`, `error`…).
    public var operations: [Operation: Int]
    /// `nil` while connected, else why not (never a password).
    public var state: String?
    /// Instances the fleet announced when last asked (1 until then).
    public var instances: Int = 1
    /// Changes of other instances applied from the fleet's log after a loss or a restart (CONTRACT §6.6).
    public var replayed: Int = 0
    /// Times the local tiers were dropped because the log could not vouch for a gap (CONTRACT §6.6).
    public var resets: Int = 0
    /// `host:port` of the Redis (the primary) in use, never a password (CONTRACT §10.6).
    public var endpoint: String?
    /// Whether the link to Redis is TLS (`rediss://`).
    public var tls = false
    /// Primary switches followed (Sentinel, CONTRACT §10.3).
    public var failovers = 0
    /// Connects refused for their TLS (a certificate that did not verify, expired, a wrong name) (CONTRACT §10.1).
    public var tlsErrors = 0
    /// Connects whose AUTH was refused (`WRONGPASS`, `NOAUTH`, `NOPERM`) (CONTRACT §10.2).
    public var authErrors = 0
    /// On a Redis Cluster (`--redis-cluster`), its map and redirections (CONTRACT §13.6); nil otherwise.
    public var cluster: Cluster?

    /// What `/stats` shows of a Redis Cluster.
    public struct Cluster: Sendable, Hashable {
        /// Nodes in the slot map, primaries and replicas.
        public var nodes: Int
        /// Slots whose primary is up, as the map's last read found: 16384 when the cluster is whole.
        public var slotsCovered: Int
        /// `-MOVED` and `-ASK` redirections followed.
        public var moved: Int
        public var ask: Int
        /// Reads of the slot map.
        public var mapRefreshes: Int

        public init(nodes: Int, slotsCovered: Int, moved: Int, ask: Int, mapRefreshes: Int) {
            self.nodes = nodes
            self.slotsCovered = slotsCovered
            self.moved = moved
            self.ask = ask
            self.mapRefreshes = mapRefreshes
        }
    }

    public struct Operation: Sendable, Hashable {
        public var operation: String
        public var result: String
        public init(_ operation: String, _ result: String) {
            self.operation = operation
            self.result = result
        }
    }

    public init(
        connected: Bool = false, hits: Int = 0, misses: Int = 0, errors: Int = 0, corrupt: Int = 0,
        invalidationsSent: Int = 0, invalidationsReceived: Int = 0, operations: [Operation: Int] = [:],
        state: String? = nil
    ) {
        self.connected = connected
        self.hits = hits
        self.misses = misses
        self.errors = errors
        self.corrupt = corrupt
        self.invalidationsSent = invalidationsSent
        self.invalidationsReceived = invalidationsReceived
        self.operations = operations
        self.state = state
    }
}
