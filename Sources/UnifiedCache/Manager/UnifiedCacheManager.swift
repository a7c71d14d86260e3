import Clocks
import Foundation
import Logging
import NIOConcurrencyHelpers

/// The cache core: memory tier → second tier → shared tier → in-flight table (and the fleet's fill lease) → fetcher.
///
/// A `final class` with locks inside rather than an actor, so the HTTP thread can answer a fresh
/// memory hit synchronously (`cachedFresh`). Lock order: the manager's state lock, then the
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
        clock: any WallClock = SystemWallClock(), userKeys: UserKeys = UserKeys(), logger: Logger,
        refreshInterval: Duration = .zero
    ) {
        memory = MemoryTier(configuration: configuration)
        self.refreshInterval = refreshInterval
        writer = secondTier.map { SecondTierWriter(tier: $0) }
        shared = sharedTier
        self.clock = clock
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

    /// Synchronous: a fresh value for `key` from memory, or from the second tier read on the calling thread
    /// (`secondTierNow`), recorded as a hit; or `nil` with nothing recorded, so the caller falls back to `get`
    /// which then records exactly once.
    /// `now`: the caller's reading of the manager's clock, if it has one (saves reading it again).
    ///
    /// `refusal` (the entry's namespace → whether its upstream refuses a fetch at once: an open circuit, a 429
    /// pause) lets a stale memory entry answer too, as the load would after that refusal (`staleRefused`).
    public func cachedFresh(
        key: String, policy: FreshnessPolicy, now: Date? = nil,
        refusal: ((_ namespace: String) -> UpstreamRefusal?)? = nil
    ) -> CacheResult? {
        let now = now ?? clock.now()
        let entry: CacheEntry
        let tier: CacheTier
        if let inMemory = memory.entry(for: key) {
            entry = inMemory
            tier = .memory
        } else if let onDisk = secondTierNow(key, policy: policy, now: now) {
            entry = onDisk
            tier = .disk
        } else {
            return nil
        }
        guard entry.kind == .value else { return nil }
        guard entry.isFresh(at: now) else { return tier == .memory ? staleRefused(entry, now: now, refusal: refusal) : nil }
        if let rule = policy.refreshAhead, rule.shouldRefresh(storedAt: entry.storedAt, now: now) { return nil }
        recorder.record(.hit, namespace: entry.namespace, tier: tier)
        return CacheResult(entry: entry, outcome: .hit, tier: tier, stored: false, now: now)
    }

    /// A fresh value read from the second tier on the calling thread and promoted into memory, as a disk hit
    /// through `get` would be, without a hop to the tier's queue (nginx reads its cache files in its event loop
    /// too). Only when nothing can make the read outdated: the shared tier vouches for the second tier's entries, no
    /// second-tier operation is queued, and no invalidation and no newer value in memory came between the read and
    /// the promotion; else `nil`, and `get` decides.
    private func secondTierNow(_ key: String, policy: FreshnessPolicy, now: Date) -> CacheEntry? {
        // As `loadSecond`: nothing stored before start-up until the shared tier vouches for it (CONTRACT §6.6).
        guard let writer, shared?.vouchesForStoredEntries ?? true else { return nil }
        guard let invalidations = state.withLockedValue({ state in writer.isIdle ? state.invalidations : nil }),
            let entry = writer.tier.loadNow(key), entry.kind == .value, entry.isFresh(at: now)
        else { return nil }
        if let rule = policy.refreshAhead, rule.shouldRefresh(storedAt: entry.storedAt, now: now) { return nil }
        let current = state.withLockedValue { state in
            guard state.invalidations == invalidations, writer.isIdle, memory.peek(key) == nil else { return false }
            _ = memory.insert(entry)
            return true
        }
        return current ? entry : nil
    }

    /// Whether `cachedShared` can ever answer: a shared tier and no second tier (fixed for the manager's life).
    public var readsSharedWithoutTasks: Bool { shared != nil && writer == nil }

    /// A shared hit without tasks: with no second tier (whose copy would come first), no pending load of `key` (a
    /// request joins it through `get`) and no fresh value in memory, `key` is asked of the shared tier and
    /// `answer` called on the thread that got the reply (a Redis worker): with a fresh value, promoted into memory
    /// and recorded as a hit, as `get` would; or with `nil`, with nothing recorded, for `get` to decide (a miss,
    /// a stale or refresh-ahead value, a remembered 404, an invalidation or a load of the key that came between).
    /// Returns false, and never calls `answer`, when the read is not offered.
    public func cachedShared(
        key: String, policy: FreshnessPolicy, answer: @escaping @Sendable (CacheResult?) -> Void
    ) -> Bool {
        guard readsSharedWithoutTasks, let shared,
            let invalidations = state.withLockedValue({ $0.inFlight.isPending(key) ? nil : $0.invalidations })
        else { return false }
        return shared.loadNow(key) { [self] entry in
            let now = clock.now()
            guard entry.kind == .value, entry.isFresh(at: now),
                policy.refreshAhead.map({ !$0.shouldRefresh(storedAt: entry.storedAt, now: now) }) ?? true
            else { return false }
            return state.withLockedValue { state in
                guard state.invalidations == invalidations, !state.inFlight.isPending(key), memory.peek(key) == nil
                else { return false }
                _ = memory.insert(entry)
                return true
            }
        } answer: { [self] entry in
            guard let entry else { return answer(nil) }
            recorder.record(.hit, namespace: entry.namespace, tier: .shared)
            answer(CacheResult(entry: entry, outcome: .hit, tier: .shared, stored: false, now: clock.now()))
        }
    }

    /// A stale memory entry within its stale window while its upstream refuses at once: what a load would answer
    /// (`STALE`, counted as stale), without the load's tasks, so that an open circuit answers at once (CONTRACT
    /// §7.3). Not with a shared tier, where another instance may have renewed the entry: the load looks there.
    private func staleRefused(
        _ entry: CacheEntry, now: Date, refusal: ((_ namespace: String) -> UpstreamRefusal?)?
    ) -> CacheResult? {
        guard shared == nil, let refusal, entry.isServableStale(at: now), let refused = refusal(entry.namespace)
        else { return nil }
        let outcome = CacheOutcome.stale(reason: .upstreamRefused(refused.reason))
        recorder.record(outcome, namespace: entry.namespace)
        return CacheResult(entry: entry, outcome: outcome, tier: .memory, stored: false, now: now)
    }

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
        guard entry.isFresh(at: now) else { return nil }
        guard entry.kind == .value else {
            recorder.record(.hit, namespace: request.namespace, tier: .memory)
            throw .notFound
        }
        if let rule = policy.refreshAhead, rule.shouldRefresh(storedAt: entry.storedAt, now: now) {
            startBackgroundRefresh(request, policy: policy, fetcher: fetcher)
            let outcome = CacheOutcome.stale(reason: .backgroundRefresh)
            recorder.record(outcome, namespace: request.namespace)
            return CacheResult(entry: entry, outcome: outcome, tier: .memory, stored: false, now: now)
        }
        recorder.record(.hit, namespace: request.namespace, tier: .memory)
        return CacheResult(entry: entry, outcome: .hit, tier: .memory, stored: false, now: now)
    }

    /// Joins the pending load of the key or starts one, then answers from its outcome.
    private func load(
        _ request: FetchRequest, policy: FreshnessPolicy, fetcher: any Fetcher, mode: InFlightTable.Mode
    ) async throws(CacheError) -> CacheResult {
        let (outcome, isLeader) = await joinOrStart(request, policy: policy, fetcher: fetcher, mode: mode).outcome()
        return try result(of: outcome, for: request, fetched: isLeader ? (mode == .refresh ? .refresh : .miss) : .coalesced)
    }

    /// Joins the pending load of `request`'s key, if there is one a plain read may join, and calls `answer` with
    /// its result once the load tells its outcome (on the thread that tells it; at once when it has): a coalesced
    /// request answered without a task. `false`, and `answer` never called, when there is none to join, or when
    /// memory holds a fresh entry: `get` answers that one (a value in its refresh-ahead window is served at once,
    /// never made to wait for the background refresh in flight).
    public func joinPendingLoad(
        _ request: FetchRequest, answer: @escaping @Sendable (Result<CacheResult, CacheError>) -> Void
    ) -> Bool {
        if let entry = memory.peek(request.key), entry.isFresh(at: clock.now()) { return false }
        guard let announced = state.withLockedValue({ $0.inFlight.join(request.key, mode: .load) }) else { return false }
        announced.whenTold { outcome in
            answer(Result { () throws(CacheError) in try self.result(of: outcome, for: request, fetched: .coalesced) })
        }
        return true
    }

    /// What a load's `outcome` answers `request` (counted): a fetched value as `fetched` (the leader's miss or
    /// refresh, a joiner's coalesced read).
    private func result(of outcome: LoadOutcome, for request: FetchRequest, fetched fetchedOutcome: CacheOutcome)
        throws(CacheError) -> CacheResult
    {
        let now = clock.now()
        switch outcome {
        case .cached(let entry, let tier):
            recorder.record(.hit, namespace: request.namespace, tier: tier)
            guard entry.kind == .value else { throw .notFound }
            return CacheResult(entry: entry, outcome: .hit, tier: tier, stored: false, now: now)
        case .joined(let entry):
            recorder.record(.coalesced, namespace: request.namespace)
            guard entry.kind == .value else { throw .notFound }
            return CacheResult(entry: entry, outcome: .coalesced, tier: nil, stored: false, now: now)
        case .fetched(let entry, let stored):
            recorder.record(fetchedOutcome, namespace: request.namespace)
            return CacheResult(entry: entry, outcome: fetchedOutcome, tier: nil, stored: stored, now: now)
        case .stale(let entry, let tier, let reason):
            let staleOutcome = CacheOutcome.stale(reason: reason)
            recorder.record(staleOutcome, namespace: request.namespace)
            return CacheResult(entry: entry, outcome: staleOutcome, tier: tier, stored: false, now: now)
        case .failed(let error):
            recorder.record(fetchedOutcome, namespace: request.namespace)
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
            recorder.record(.hit, namespace: request.namespace, tier: tier)
            guard entry.kind == .value else { throw .notFound }
            return CacheResult(entry: entry, outcome: .hit, tier: tier, stored: false, now: now)
        }
        guard entry.kind == .value else { throw .notCached }
        let outcome = CacheOutcome.stale(reason: .onlyIfCached)
        recorder.record(outcome, namespace: request.namespace)
        return CacheResult(entry: entry, outcome: outcome, tier: tier, stored: false, now: now)
    }
}
