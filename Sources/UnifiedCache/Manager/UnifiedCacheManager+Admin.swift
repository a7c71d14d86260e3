import Clocks
import Foundation

extension UnifiedCacheManager {
    /// Raw API `PUT`: stores `body` under `key` for `ttl` (never served stale); `created` is false when a fresh
    /// value was replaced. With a second tier the put is acknowledged only once that tier has written it: until
    /// then readers see the previous value, and when the tier cannot write it (full or read-only disk, I/O error)
    /// it throws `PutError.notStored` and the key is removed from every tier (a previous file the tier could not
    /// delete either, or a shared tier that cannot be asked, is the error's `leftover`).
    /// With a shared tier the value is written there first (which tells the fleet its older copies are gone);
    /// when it cannot be, `PutError.sharedTierUnavailable` and nothing is stored anywhere. With neither tier, an entry
    /// larger than the memory tier's whole budget is `PutError.largerThanMemory`, and nothing changes.
    public func put(
        key: String, body: [UInt8], contentType: String = "application/octet-stream", ttl: Duration,
        namespace: String = "raw", user: String? = nil
    ) async throws(PutError) -> (created: Bool, entry: CacheEntry) {
        // The memory check happens under the lock, atomically with the store; the second tier is asked before.
        let elsewhere = memory.contains(key) ? false : await peekBelowMemory(key) != nil
        let now = clock.now()
        let expiresAt = now + max(.zero, ttl)
        let body = EntryCost.compacted(body)
        let entry = CacheEntry(
            key: key, namespace: namespace, user: user, body: body, contentType: contentType,
            etag: ETag.make(for: body), storedAt: now, expiresAt: expiresAt, staleUntil: expiresAt)
        // Memory alone would drop it at once (the acknowledged value then absent); refused before anything changes.
        if writer == nil, shared == nil, case let cost = MemoryTier.cost(of: entry), !memory.fits(cost) {
            throw .largerThanMemory(cost: cost, limitBytes: memory.configuration.maxBytes)
        }
        if let shared {
            do throws(SharedTierUnavailable) { try await shared.store(entry) } catch { throw .sharedTierUnavailable(error) }
        }
        var replacedFresh = false
        let stored: Bool = await withCheckedContinuation { done in
            state.withLockedValue { state in
                // A put supersedes a load in flight for the key: that load must not overwrite it.
                state.inFlight.detach(where: KeyScope(kind: .key(key)))
                replacedFresh = memory.peek(key).map { $0.kind == .value && $0.isFresh(at: now) } ?? false
                guard let writer else {
                    memory.insert(entry)
                    return done.resume(returning: true)
                }
                let invalidations = state.invalidations
                writer.enqueue(.put(entry, settle: { self.settlePut(entry, stored: $0, since: invalidations) }, done: done))
            }
        }
        guard stored else {
            logger.warning("raw put refused: the disk tier could not write it", metadata: ["bytes": "\(body.count)"])
            // Nothing may stay stored: the shared tier took it first, and the tier may have kept its previous file.
            var leftover = InvalidationFailures()
            _ = await removed(KeyScope(kind: .key(key)), noting: &leftover)
            // A healthy tier refuses only an entry larger than its whole budget (a fault is its health's reason).
            let reason = secondTier.map {
                $0.health() ?? "the entry is larger than the disk tier's whole budget of \($0.statistics().limitBytes) bytes"
            } ?? "the disk tier could not write the entry"
            throw .notStored(reason: reason, leftover: leftover.incomplete)
        }
        logger.debug("raw put", metadata: ["key": "\(key)", "bytes": "\(body.count)"])
        return (!(replacedFresh || elsewhere), entry)
    }

    /// Runs in the second tier's queue order once it has answered a put: a written entry enters memory unless an
    /// invalidation (of any key) came in between, and then the previous value leaves it (the disk copy, if still
    /// current, serves the key); a refused one leaves the key in no tier, so that memory never holds what the disk
    /// does not.
    private func settlePut(_ entry: CacheEntry, stored: Bool, since invalidations: UInt64) {
        state.withLockedValue { state in
            if !stored {
                state.invalidations &+= 1
                memory.remove(entry.key)
            } else if state.invalidations == invalidations {
                memory.insert(entry)
            } else {
                memory.remove(entry.key)
            }
        }
    }

    /// Raw API `GET`: the fresh value for `key`, memory, second tier, then shared tier; never stale, never a
    /// "not found" entry.
    public func peek(_ key: String) async -> CacheEntry? {
        if let entry = memory.entry(for: key), entry.kind == .value, entry.isFresh(at: clock.now()) { return entry }
        return await peekBelowMemory(key)
    }

    /// Raw API `DELETE`: whether a fresh value, or a remembered "not found" (which the listing shows and a prefix
    /// delete counts), is in effect under `key`.
    public func holds(_ key: String) async -> Bool {
        if let entry = memory.entry(for: key), entry.isFresh(at: clock.now()) { return true }
        return await peekBelowMemory(key, notFoundToo: true) != nil
    }

    /// A fresh value (`notFoundToo`: or a remembered "not found") from the second tier, else from the shared tier.
    private func peekBelowMemory(_ key: String, notFoundToo: Bool = false) async -> CacheEntry? {
        let wanted = { (entry: CacheEntry) in
            (notFoundToo || entry.kind == .value) && entry.isFresh(at: self.clock.now())
        }
        if let entry = await loadSecond(key), wanted(entry) { return entry }
        guard let entry = await loadShared(key), wanted(entry) else { return nil }
        return entry
    }

    /// Raw API `DELETE`: removes `key` from every tier; `true` if some tier held it.
    @discardableResult
    public func remove(_ key: String) async throws(InvalidationIncomplete) -> Bool {
        try await invalidate(key: key)
    }

    /// Removes `key` from memory and the second tier (awaited), then from the shared tier and the fleet's local
    /// tiers; a load in flight for it will not store. Throws, once every tier was asked, when the second tier could
    /// not delete it or the shared tier could not be asked.
    @discardableResult
    public func invalidate(key: String) async throws(InvalidationIncomplete) -> Bool {
        try await invalidate(KeyScope(kind: .key(key))) > 0
    }

    /// Removes every key starting with `prefix`; returns the number of distinct keys removed across tiers.
    public func invalidate(prefix: String) async throws(InvalidationIncomplete) -> Int {
        try await invalidate(KeyScope(kind: .prefix(prefix)))
    }

    /// Removes `user`'s entries of the given namespaces (event rules); distinct keys removed.
    public func invalidate(namespaces: Set<String>, user: String) async throws(InvalidationIncomplete) -> Int {
        try await invalidate(KeyScope(kind: .namespaces(namespaces, user: user)))
    }

    /// Erases every entry of `user` from every tier, those stored with the user and those whose key names the user
    /// (`userKeys`: raw entries under a read-through key, stored before such puts were refused); distinct keys removed.
    /// The shared tier is given the same key shapes (`RedisTierConfiguration.userKeys`) and announces the erasure
    /// once, which every instance applies with its `userKeys`.
    public func erase(user: String) async throws(InvalidationIncomplete) -> Int {
        try await invalidate(KeyScope(kind: .user(user), userKeys: userKeys))
    }

    /// Clears every tier; distinct keys removed.
    public func removeAll() async throws(InvalidationIncomplete) -> Int {
        try await invalidate(KeyScope(kind: .all))
    }

    /// Stored entries whose key starts with `prefix`, memory and second tier merged (memory wins), by key; an entry
    /// past its stale window (a raw entry past its TTL) is no longer listed, as no read serves it.
    public func list(prefix: String, limit: Int = 1000) async -> [EntryListing] {
        var rows: [String: EntryListing] = [:]
        let now = clock.now()
        for metadata in memory.list(prefix: prefix) where now < metadata.staleUntil {
            rows[metadata.key] = EntryListing(metadata, tier: .memory)
        }
        if let secondTier {
            for metadata in await secondTier.list(prefix: prefix, limit: limit) where rows[metadata.key] == nil {
                rows[metadata.key] = EntryListing(metadata, tier: .disk)
            }
        }
        return rows.values.sorted { $0.key < $1.key }.prefix(max(0, limit)).map { $0 }
    }

    /// A snapshot of every counter, the memory tier, the second tier and the shared tier.
    public func statistics() -> CacheStatistics {
        var statistics = recorder.snapshot(memory: memory.statistics(), secondTier: secondTier?.statistics())
        statistics.shared = shared?.statistics()
        return statistics
    }

    /// Starts the shared tier's connections and the delivery of the fleet's events (start-up).
    public func startSharedTier() {
        shared?.start(
            events: { [weak self] event in self?.apply(event) },
            settled: { [weak self] in await self?.flush() })
    }

    /// The shared tier's work, until the calling task is cancelled (shutdown); then its events stop and its
    /// connections close. Returns at once without a shared tier.
    public func runSharedTier() async {
        await shared?.run()
    }

    /// A graceful stop's last step before the shared tier's `run` is cancelled: the fleet's changes announced so far
    /// applied (bounded), then the second tier's writes flushed, so that the shared tier's last checkpoint claims
    /// them all and a restart does not replay this instance's own last stores against its disk.
    public func prepareToStop() async {
        await shared?.catchUpBeforeStop()
        await flush()
    }

    /// `nil` when the second tier (if any) is healthy, else its reason.
    public func health() -> String? {
        secondTier?.health()
    }

    /// `health()` after the second tier checked itself now (its data dir writable): for /readyz.
    public func checkedHealth() async -> String? {
        await secondTier?.checkedHealth()
    }

    private func invalidate(_ scope: KeyScope) async throws(InvalidationIncomplete) -> Int {
        var failures = InvalidationFailures()
        let keys = await removed(scope, noting: &failures)
        try failures.check()
        return keys.count
    }

    /// Removes what `scope` covers from every tier, noting what a tier could not do; the distinct keys removed.
    private func removed(_ scope: KeyScope, noting failures: inout InvalidationFailures) async -> Set<String> {
        var inMemory: [String] = []
        let onDisk: SecondTierRemoval = await withCheckedContinuation { done in
            inMemory = dropLocally(scope, done: done)
        }
        let local = Set(inMemory).union(onDisk.removed)
        logger.debug("invalidated", metadata: ["scope": "\(scope.kind)", "keys": "\(local.count)"])
        failures.secondTier = failures.secondTier ?? onDisk.failure
        return local.union(await invalidateShared(scope, noting: &failures))
    }
}

extension EntryListing {
    init(_ metadata: CacheEntryMetadata, tier: CacheTier) {
        self.init(
            key: metadata.key, namespace: metadata.namespace, bytes: metadata.bytes, tier: tier,
            storedAt: metadata.storedAt, expiresAt: metadata.expiresAt)
    }
}

extension UnifiedCacheManager {
    /// Waits for every load and refresh in flight right now (tests, shutdown); new ones are not awaited.
    package func waitForPendingLoads() async {
        let tasks = state.withLockedValue { $0.inFlight.pendingTasks }
        for task in tasks { _ = await task.value }
    }

    /// Requests currently waiting on another request's load of `key` (tests, diagnostics).
    package func coalescedWaiters(for key: String) -> Int {
        state.withLockedValue { $0.inFlight.waiters(key) }
    }
}
