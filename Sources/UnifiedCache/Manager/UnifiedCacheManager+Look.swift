import Foundation

/// How fresh an entry is to a read under its policy: the one rule every read of the core applies.
enum ReadFreshness {
    /// Fresh, outside any refresh-ahead window: answered as it is.
    case fresh
    /// Fresh, but the policy's refresh-ahead window asks for a background refresh: `get` serves it and starts one.
    case refreshAhead
    /// Past its freshness: only a load (or a refusal of the upstream) may serve it.
    case stale
}

extension CacheEntry {
    func freshness(at now: Date, policy: FreshnessPolicy) -> ReadFreshness {
        guard isFresh(at: now) else { return .stale }
        if let rule = policy.refreshAhead, rule.shouldRefresh(storedAt: storedAt, now: now) { return .refreshAhead }
        return .fresh
    }
}

extension UnifiedCacheManager {
    /// The synchronous read, on the caller's thread: `.ready` with a fresh value from memory or the second tier (read
    /// here, `secondTierNow`), counted; `.pending` when a load of the key is in flight (joined) or, with a shared
    /// tier and no second tier, the shared tier can be asked without a task; `.absent` with nothing counted, so the
    /// caller's `get` counts exactly once. A fresh value in its refresh-ahead window is `.absent` (`get` serves it at
    /// once and starts the refresh; it never waits for one in flight).
    ///
    /// `now`: the caller's reading of the manager's clock, if it has one. `refusal` (a namespace → whether its
    /// upstream refuses a fetch at once) lets a stale memory copy answer too, as the load would after that refusal.
    /// `joining: false` looks without joining (a caller that answers only what is ready).
    public func look(
        _ request: FetchRequest, policy: FreshnessPolicy, now: Date? = nil,
        refusal: ((_ namespace: String) -> UpstreamRefusal?)? = nil, joining: Bool = true
    ) -> CacheLook {
        let now = now ?? clock.now()
        // Hashed once for the memory tier: the look-up, and the promotion of a disk or shared hit.
        let hash = MemoryTier.hash(request.key)
        if let (entry, handle) = memory.located(request.key, hash: hash) {
            switch entry.freshness(at: now, policy: policy) {
            case .fresh:
                guard entry.kind == .value else { return .absent }
                recorder.record(.hit, namespace: entry.namespace, tier: .memory)
                var result = CacheResult(entry: entry, outcome: .hit, tier: .memory, stored: false, now: now)
                result.memoryPlace.handle = handle
                return .ready(result)
            case .refreshAhead:
                return .absent
            case .stale:
                if let stale = staleRefused(entry, now: now, refusal: refusal) { return .ready(stale) }
            }
        } else if let entry = secondTierNow(request.key, hash: hash, policy: policy, now: now) {
            recorder.record(.hit, namespace: entry.namespace, tier: .disk)
            return .ready(CacheResult(entry: entry, outcome: .hit, tier: .disk, stored: false, now: now))
        }
        guard joining else { return .absent }
        let joined = state.withLockedValue { state -> PendingRead.Source? in
            if let announced = state.inFlight.join(request.key, mode: .load) { return .load(announced) }
            guard readsSharedWithoutTasks else { return nil }
            return .shared(policy: policy, invalidations: state.invalidations, keyHash: hash)
        }
        guard let joined else { return .absent }
        return .pending(PendingRead(manager: self, key: request.key, namespace: request.namespace, source: joined))
    }

    /// `look`'s memory hit on `result`'s key when it would answer `result` again (a memory hit on the value `result`
    /// was read from, as old and as fresh to the second: what a caller that rendered `result` can answer with as it
    /// did), counted as `look` counts it, and true, without a copy of the entry; false with nothing counted (then
    /// `look`).
    public func lookAgain(_ result: borrowing CacheResult, policy: FreshnessPolicy, now: Date) -> Bool {
        guard result.isMemoryHitAgain(at: now), result.entry.kind == .value,
            result.entry.freshness(at: now, policy: policy) == .fresh,
            memory.hit(sameAs: result.entry, near: result.memoryPlace.handle)
        else { return false }
        recorder.record(.hit, namespace: result.entry.namespace, tier: .memory)
        return true
    }

    /// Whether the shared tier can be asked without a task: a shared tier and no second tier (whose copy would come
    /// first). Fixed for the manager's life.
    var readsSharedWithoutTasks: Bool { shared != nil && writer == nil }

    /// A fresh value read from the second tier on the calling thread and promoted into memory, as a disk hit
    /// through `get` would be, without a hop to the tier's queue (nginx reads its cache files in its event loop
    /// too). Only when nothing can make the read outdated: the shared tier vouches for the second tier's entries, no
    /// second-tier operation is queued, and no invalidation and no newer value in memory came between the read and
    /// the promotion; else `nil`, and `get` decides. A value read for `key` is promoted under `hash`, the look-up's:
    /// one that holds another key (never from a tier that checks what it read) is not taken.
    private func secondTierNow(_ key: String, hash: UInt32, policy: FreshnessPolicy, now: Date) -> CacheEntry? {
        // As `loadSecond`: nothing stored before start-up until the shared tier vouches for it (CONTRACT §6.6).
        guard let writer, shared?.vouchesForStoredEntries ?? true else { return nil }
        guard let invalidations = state.withLockedValue({ state in writer.isIdle ? state.invalidations : nil }),
            let entry = writer.tier.loadNow(key, hash: hash), entry.key == key, entry.kind == .value,
            entry.freshness(at: now, policy: policy) == .fresh
        else { return nil }
        let current = state.withLockedValue { state in
            state.invalidations == invalidations && writer.isIdle && memory.promote(entry, hash: hash)
        }
        return current ? entry : nil
    }

    /// A stale memory entry within its stale window while its upstream refuses at once: what a load would answer
    /// (`STALE`, counted as stale), without the load's tasks, so that an open circuit answers at once (CONTRACT
    /// §7.3). Not with a shared tier, where another instance may have renewed the entry: the load looks there.
    private func staleRefused(
        _ entry: CacheEntry, now: Date, refusal: ((_ namespace: String) -> UpstreamRefusal?)?
    ) -> CacheResult? {
        guard shared == nil, entry.kind == .value, let refusal, entry.isServableStale(at: now),
            let refused = refusal(entry.namespace)
        else { return nil }
        let outcome = CacheOutcome.stale(reason: .upstreamRefused(refused.reason))
        recorder.record(outcome, namespace: entry.namespace)
        return CacheResult(entry: entry, outcome: outcome, tier: .memory, stored: false, now: now)
    }

    /// A shared hit without tasks: `key` is asked of the shared tier and `answer` called on the thread that got the
    /// reply (a Redis worker): with a fresh value, promoted into memory and counted as a hit, as `get` would; or with
    /// `nil`, with nothing counted, for `get` to decide (a miss, a stale or refresh-ahead value, a remembered 404, an
    /// invalidation after `invalidations`, a load of the key or a value in memory that came between, or a read the
    /// shared tier does not offer now).
    /// `keyHash`: the key's `MemoryTier.hash`, for the promotion.
    func askShared(
        _ key: String, keyHash: UInt32, policy: FreshnessPolicy, after invalidations: UInt64,
        answer: @escaping @Sendable (Result<CacheResult, CacheError>?) -> Void
    ) {
        guard let shared else { return answer(nil) }
        let read = SharedAsk(
            manager: self, key: key, keyHash: keyHash, policy: policy, invalidations: invalidations, answer: answer)
        if !shared.loadNow(key, for: read) { answer(nil) }
    }
}

/// `askShared`'s read: a fresh entry is taken (promoted into memory) only when no invalidation and no load of its
/// key came between the look and the reply, then counted and answered as a shared hit.
private final class SharedAsk: SharedReadNow {
    let manager: UnifiedCacheManager
    let key: String
    let keyHash: UInt32
    let policy: FreshnessPolicy
    let invalidations: UInt64
    let reply: @Sendable (Result<CacheResult, CacheError>?) -> Void

    init(
        manager: UnifiedCacheManager, key: String, keyHash: UInt32, policy: FreshnessPolicy, invalidations: UInt64,
        answer: @escaping @Sendable (Result<CacheResult, CacheError>?) -> Void
    ) {
        (self.manager, self.key, self.keyHash, self.policy, self.invalidations, reply) =
            (manager, key, keyHash, policy, invalidations, answer)
    }

    /// Promoted under `keyHash`, the look-up's: a value that holds another key is not taken (as `secondTierNow`).
    func accept(_ entry: CacheEntry) -> Bool {
        guard entry.key == key, entry.kind == .value,
            entry.freshness(at: manager.clock.now(), policy: policy) == .fresh
        else { return false }
        return manager.state.withLockedValue { state in
            state.invalidations == invalidations && !state.inFlight.isPending(key)
                && manager.memory.promote(entry, hash: keyHash)
        }
    }

    func answer(_ entry: CacheEntry?) {
        guard let entry else { return reply(nil) }
        manager.recorder.record(.hit, namespace: entry.namespace, tier: .shared)
        let now = manager.clock.now()
        reply(.success(CacheResult(entry: entry, outcome: .hit, tier: .shared, stored: false, now: now)))
    }
}
