import Clocks
import Foundation
import Logging
import NIOConcurrencyHelpers

/// The cache core: memory tier → second tier → shared tier → in-flight table (and the fleet's fill lease) → fetcher.
///
/// A `final class` with locks inside rather than an actor, so the HTTP thread can answer a fresh
/// memory hit synchronously (`look`). Lock order: the manager's state lock, then the
/// memory tier's lock (never the reverse).
public final class UnifiedCacheManager: Sendable {
    struct State {
        var inFlight = InFlightTable()
        /// Counts invalidations of any scope: a raw put whose disk write spanned one does not fill memory.
        var invalidations: UInt64 = 0
    }

    let memory: MemoryTier
    let writer: SecondTierWriter?
    let shared: (any SharedTier)?
    let clock: any WallClock
    /// Readings of the process's monotonic clock: a fetch's latency.
    let elapsed: Elapsed
    let logger: Logger
    /// `--refresh-interval` (CONTRACT §15.1): a forced refresh of a copy fetched less than this long ago is a hit of
    /// it; zero (the default) never throttles.
    let refreshInterval: Duration
    /// Keys that name a user whatever their entry says (erasure).
    let userKeys: UserKeys
    let recorder = StatisticsRecorder()
    let state = NIOLockedValueBox(State())

    public init(
        configuration: MemoryTierConfiguration, secondTier: (any SecondTier)?, sharedTier: (any SharedTier)? = nil,
        clock: any WallClock, ticker: any Clock<Duration>, userKeys: UserKeys = UserKeys(), logger: Logger,
        refreshInterval: Duration = .zero
    ) {
        memory = MemoryTier(configuration: configuration)
        self.refreshInterval = refreshInterval
        writer = secondTier.map { SecondTierWriter(tier: $0) }
        shared = sharedTier
        self.clock = clock
        elapsed = Elapsed(ticker)
        self.userKeys = userKeys
        self.logger = logger
        logger.info(
            "cache started",
            metadata: [
                "memoryLimitBytes": "\(configuration.maxBytes)", "memoryEntries": "\(configuration.maxEntries)",
                "secondTier": "\(secondTier != nil)", "sharedTier": "\(sharedTier != nil)",
            ])
    }

    var secondTier: (any SecondTier)? { writer?.tier }

    /// The value for `request`, from a tier or fetched (coalesced per key), following `policy` and `control`.
    public func get(
        _ request: FetchRequest, policy: FreshnessPolicy, fetcher: any Fetcher, control: RequestControl = .normal
    ) async throws(CacheError) -> CacheResult {
        switch control {
        case .normal:
            if let result = try memoryHit(request, policy: policy, fetcher: fetcher) { return result }
            return try await load(request, policy: policy, fetcher: fetcher, mode: .load)
        case .refresh:
            if let result = try await throttledRefresh(request) { return result }
            return try await load(request, policy: policy, fetcher: fetcher, mode: .refresh)
        case .onlyIfCached:
            return try await cachedOnly(request)
        }
    }

    /// Waits until every second-tier write queued so far is done (shutdown, tests).
    public func flush() async {
        await writer?.flush()
    }

    /// A fresh memory entry answers directly (a remembered 404 throws `notFound`, counted as a hit);
    /// refresh-ahead serves it stale and starts one background refresh.
    private func memoryHit(
        _ request: FetchRequest, policy: FreshnessPolicy, fetcher: any Fetcher
    ) throws(CacheError) -> CacheResult? {
        guard let entry = memory.entry(for: request.key) else { return nil }
        let now = clock.now()
        let freshness = entry.freshness(at: now, policy: policy)
        guard freshness != .stale else { return nil }
        guard entry.kind == .value else {
            count(.hit, request, tier: .memory)
            throw .notFound(.hit, tier: .memory, stored: false)
        }
        if freshness == .refreshAhead {
            startBackgroundRefresh(request, policy: policy, fetcher: fetcher)
            let outcome = CacheOutcome.stale(reason: .backgroundRefresh)
            count(outcome, request)
            return CacheResult(entry: entry, outcome: outcome, tier: .memory, stored: false, now: now)
        }
        count(.hit, request, tier: .memory)
        return CacheResult(entry: entry, outcome: .hit, tier: .memory, stored: false, now: now)
    }

    /// Joins the pending load of the key or starts one, then answers from its outcome.
    private func load(
        _ request: FetchRequest, policy: FreshnessPolicy, fetcher: any Fetcher, mode: InFlightTable.Mode
    ) async throws(CacheError) -> CacheResult {
        let (outcome, isLeader) = await joinOrStart(request, policy: policy, fetcher: fetcher, mode: mode).outcome()
        return try result(
            of: outcome, namespace: request.counted ? request.namespace : nil,
            fetched: isLeader ? (mode == .refresh ? .refresh : .miss) : .coalesced)
    }

    /// Counts `outcome` for `request`, unless the request is a part of a composed answer (`counted` false).
    func count(_ outcome: CacheOutcome, _ request: FetchRequest, tier: CacheTier? = nil) {
        guard request.counted else { return }
        recorder.record(outcome, namespace: request.namespace, tier: tier)
    }

    /// Counts one answer composed of reads made with `counted` false (`/health/summary`), under `namespace`: a
    /// composed request counts once, as every read-through request does.
    public func countComposed(_ outcome: CacheOutcome, namespace: String, tier: CacheTier?) {
        recorder.record(outcome, namespace: namespace, tier: tier)
    }

    /// What a load's `outcome` answers a request of `namespace` (counted there; nil: not counted): a fetched value as
    /// `fetched` (the leader's miss or refresh, a joiner's coalesced read).
    func result(of outcome: LoadOutcome, namespace: String?, fetched fetchedOutcome: CacheOutcome)
        throws(CacheError) -> CacheResult
    {
        let now = clock.now()
        func tally(_ outcome: CacheOutcome, tier: CacheTier? = nil) {
            if let namespace { recorder.record(outcome, namespace: namespace, tier: tier) }
        }
        switch outcome {
        case .cached(let entry, let tier):
            tally(.hit, tier: tier)
            guard entry.kind == .value else { throw .notFound(.hit, tier: tier, stored: false) }
            return CacheResult(entry: entry, outcome: .hit, tier: tier, stored: false, now: now)
        case .joined(let entry):
            tally(.coalesced)
            guard entry.kind == .value else { throw .notFound(.coalesced, tier: nil, stored: false) }
            return CacheResult(entry: entry, outcome: .coalesced, tier: nil, stored: false, now: now)
        case .fetched(let entry, let stored):
            tally(fetchedOutcome)
            return CacheResult(entry: entry, outcome: fetchedOutcome, tier: nil, stored: stored, now: now)
        case .stale(let entry, let tier, let reason):
            let staleOutcome = CacheOutcome.stale(reason: reason)
            tally(staleOutcome)
            return CacheResult(entry: entry, outcome: staleOutcome, tier: tier, stored: false, now: now)
        case .notFound(let stored):
            tally(fetchedOutcome)
            throw .notFound(fetchedOutcome, tier: nil, stored: stored)
        case .failed(.refused(let refusal)):
            // Answered neither from the cache nor by an upstream (CONTRACT §5): counted in none, as an only-if-cached
            // 504 is; the gate counts the refusal itself.
            throw .refused(refusal)
        case .failed(let error):
            tally(fetchedOutcome)
            throw error
        }
    }

    /// A load joined or started: the starter waits for its whole task, a joiner for the outcome it announces.
    private enum JoinedLoad {
        case started(Task<LoadOutcome, Never>)
        case joined(AnnouncedOutcome)

        var isLeader: Bool {
            if case .started = self { return true }
            return false
        }

        func outcome() async -> (LoadOutcome, isLeader: Bool) {
            switch self {
            case .started(let task): return (await task.value, true)
            case .joined(let announced): return (await announced.value, false)
            }
        }
    }

    /// Registers a new shared load under the lock, before any suspension, unless one can be joined.
    private func joinOrStart(
        _ request: FetchRequest, policy: FreshnessPolicy, fetcher: any Fetcher, mode: InFlightTable.Mode
    ) -> JoinedLoad {
        state.withLockedValue { state in
            if let announced = state.inFlight.join(request.key, mode: mode) { return .joined(announced) }
            let id = state.inFlight.nextID()
            let announced = AnnouncedOutcome()
            // Its own unstructured task: a waiter going away does not cancel the load for the others.
            let task = Task {
                let outcome = await self.runLoad(
                    request, policy: policy, fetcher: fetcher, id: id, mode: mode, announce: announced.tell)
                announced.tell(outcome)
                return outcome
            }
            state.inFlight.register(
                .init(
                    id: id, key: request.key, namespace: request.namespace, user: request.user, task: task,
                    announced: announced),
                mode: mode)
            return .started(task)
        }
    }

    /// Refresh-ahead: one background refresh per key; nobody waits for it (it yields at the upstream gate).
    private func startBackgroundRefresh(_ request: FetchRequest, policy: FreshnessPolicy, fetcher: any Fetcher) {
        var request = request
        request.background = true
        let started = joinOrStart(request, policy: policy, fetcher: fetcher, mode: .refresh).isLeader
        if started { logger.debug("background refresh", metadata: ["key": "\(request.key)"]) }
    }

    /// `only-if-cached`: a fresh or stale-servable stored value, never a fetch; `notCached` (recorded nowhere) else.
    private func cachedOnly(_ request: FetchRequest) async throws(CacheError) -> CacheResult {
        var found: (CacheEntry, CacheTier)?
        if let entry = memory.entry(for: request.key), entry.isServableStale(at: clock.now()) {
            found = (entry, .memory)
        } else if let entry = await loadSecond(request.key), entry.isServableStale(at: clock.now()) {
            found = (entry, .disk)
        } else if let entry = await loadShared(request.key), entry.isServableStale(at: clock.now()) {
            found = (entry, .shared)
        }
        let now = clock.now()
        guard let (entry, tier) = found else { throw .notCached }
        if entry.isFresh(at: now) {
            count(.hit, request, tier: tier)
            guard entry.kind == .value else { throw .notFound(.hit, tier: tier, stored: false) }
            return CacheResult(entry: entry, outcome: .hit, tier: tier, stored: false, now: now)
        }
        guard entry.kind == .value else { throw .notCached }
        let outcome = CacheOutcome.stale(reason: .onlyIfCached)
        count(outcome, request)
        return CacheResult(entry: entry, outcome: outcome, tier: tier, stored: false, now: now)
    }
}
