import Clocks
import Foundation

extension UnifiedCacheManager {
    /// The body of a shared load: re-check memory, the second tier and the shared tier (load mode), take the
    /// fleet's fill lease or wait for the instance that holds it, fetch, then store if the load is still current
    /// (locally and in the shared tier), or fall back to a stale copy when the fetch failed.
    /// `announce` tells the requests that joined a fetched outcome before the shared-tier store.
    func runLoad(
        _ request: FetchRequest, policy: FreshnessPolicy, fetcher: any Fetcher, id: UInt64, mode: InFlightTable.Mode,
        announce: @Sendable (LoadOutcome) -> Void = { _ in }
    ) async -> LoadOutcome {
        let key = request.key
        var staleCopy: (entry: CacheEntry, tier: CacheTier)?
        if mode == .load {
            let now = clock.now()
            if let entry = finishIfFresh(id: id, key: key, mode: mode, now: now) {
                if entry.isFresh(at: now) { return .cached(entry, .memory) }
                if entry.isServableStale(at: now), entry.kind == .value { staleCopy = (entry, .memory) }
            }
            if let entry = await loadSecond(key) {
                let now = clock.now()
                if entry.isFresh(at: now) {
                    _ = complete(id: id, key: key, mode: mode, storing: entry, writeThrough: false)
                    return .cached(entry, .disk)
                }
                if staleCopy == nil, entry.isServableStale(at: now), entry.kind == .value { staleCopy = (entry, .disk) }
            }
        }
        var lease: String?
        if mode == .load, let shared {
            switch await fleetLookup(key, shared: shared) {
            case .cached(let entry):
                _ = complete(id: id, key: key, mode: mode, storing: entry)
                return .cached(entry, .shared)
            case .joined(let entry):
                _ = complete(id: id, key: key, mode: mode, storing: entry)
                return .joined(entry)
            case .lead(let token, let stale):
                lease = token
                if staleCopy == nil, let stale { staleCopy = (stale, .shared) }
            }
        }
        let outcome = await withTaskGroup(of: Void.self) { group in
            // A fleet lease is kept while the fetch lasts (it may wait for a slot longer than the lease lives).
            if let token = lease, let shared { group.addTask { await shared.holdFill(key, token: token) } }
            let outcome = await fetchAndStore(
                request, policy: policy, fetcher: fetcher, id: id, mode: mode, staleCopy: staleCopy, lease: &lease,
                announce: announce)
            group.cancelAll()
            return outcome
        }
        if let lease, let shared {
            announce(outcome)
            await shared.releaseFill(key, token: lease)
        }
        return outcome
    }

    /// Fetches, records the fetch, stores the value (memory, write-through, shared tier) if the load is still
    /// current, or answers from `staleCopy` when the fetch failed. A shared store gives the fill `lease` back in the
    /// same step (and sets it to nil); any other outcome leaves it to the caller. The joined requests are told a
    /// stored outcome (`announce`) before the shared store.
    private func fetchAndStore(
        _ request: FetchRequest, policy: FreshnessPolicy, fetcher: any Fetcher, id: UInt64, mode: InFlightTable.Mode,
        staleCopy: (entry: CacheEntry, tier: CacheTier)?, lease: inout String?, announce: @Sendable (LoadOutcome) -> Void
    ) async -> LoadOutcome {
        let key = request.key
        var staleCopy = staleCopy
        let lookedUp = mode == .load
        let started = elapsed.now()
        let result: Result<FetchedValue, FetchError>
        do throws(FetchError) {
            result = .success(try await fetcher.fetch(request))
        } catch {
            result = .failure(error)
        }
        let seconds = (elapsed.now() - started).seconds
        // A fetch the upstream gate refused, or the HTTP client refused to send, never reached the upstream: not a
        // fetch (nor an upstream failure); one that could not reach it is a failure but not a fetch either.
        switch result {
        case .failure(.refused), .failure(.invalidRequest): break
        case .failure(.unreachable): recorder.recordUnsentFailure(namespace: request.namespace)
        case .failure(let error): recorder.recordFetch(namespace: request.namespace, seconds: seconds, failed: error != .notFound)
        case .success: recorder.recordFetch(namespace: request.namespace, seconds: seconds, failed: false)
        }

        switch result {
        case .success(let value):
            let storedAt = clock.now()
            let (expiresAt, staleUntil) = policy.lifetimes(body: value.body, storedAt: storedAt)
            let entry = CacheEntry(
                key: key, namespace: request.namespace, user: request.user, body: EntryCost.compacted(value.body),
                contentType: value.contentType, etag: ETag.make(for: value.body),
                storedAt: storedAt, expiresAt: expiresAt, staleUntil: staleUntil)
            guard value.storable else {
                await completeUnstorable(id: id, key: key, mode: mode, copySeen: staleCopy != nil || mode == .refresh)
                return .fetched(entry, stored: false)
            }
            let stored = complete(id: id, key: key, mode: mode, storing: entry)
            let outcome = LoadOutcome.fetched(entry, stored: stored)
            if stored {
                // The joined requests are answered now; the store (and the lease's release with it) follows.
                announce(outcome)
                await storeShared(entry, releasing: lease)
                lease = nil
            }
            return outcome

        case .failure(.notFound):
            let storedAt = clock.now()
            let (expiresAt, staleUntil) = policy.negativeLifetimes(storedAt: storedAt)
            let negative = CacheEntry(
                key: key, namespace: request.namespace, user: request.user, kind: .notFound, body: [],
                contentType: "application/json", etag: ETag.make(for: []),
                storedAt: storedAt, expiresAt: expiresAt, staleUntil: staleUntil)
            let stored = complete(id: id, key: key, mode: mode, storing: policy.negativeTTL > .zero ? negative : nil)
            if stored {
                announce(.notFound(stored: true))
                await storeShared(negative, releasing: lease)
                lease = nil
            }
            logger.debug("upstream not found", metadata: ["key": "\(key)"])
            return .notFound(stored: stored)

        case .failure(let error):
            logger.debug("fetch failed", metadata: ["key": "\(key)", "error": "\(error)"])
            if !lookedUp { staleCopy = await servableCopy(key) }
            let now = clock.now()
            if let copy = staleCopy, copy.entry.isServableStale(at: now) {
                // Promote a disk or shared copy so the next stale answer does not read that tier again.
                _ = complete(
                    id: id, key: key, mode: mode, storing: copy.tier == .memory ? nil : copy.entry, writeThrough: false)
                return .stale(copy.entry, copy.tier, Self.staleReason(after: error))
            }
            _ = complete(id: id, key: key, mode: mode, storing: nil)
            switch error {
            case .rateLimited(let retryAfter): return .failed(.rateLimited(retryAfter: retryAfter))
            case .refused(let refusal): return .failed(.refused(refusal))
            default: return .failed(.upstreamFailed(error))
            }
        }
    }

    static func staleReason(after error: FetchError) -> CacheOutcome.StaleReason {
        if case .refused(let refusal) = error { return .upstreamRefused(refusal.reason) }
        return .upstreamError
    }

    /// Any stored value within its stale window (fresh included), memory first.
    private func servableCopy(_ key: String) async -> (entry: CacheEntry, tier: CacheTier)? {
        if let entry = memory.peek(key), entry.kind == .value, entry.isServableStale(at: clock.now()) {
            return (entry, .memory)
        }
        if let entry = await loadSecond(key), entry.kind == .value, entry.isServableStale(at: clock.now()) {
            return (entry, .disk)
        }
        if let entry = await loadShared(key), entry.kind == .value, entry.isServableStale(at: clock.now()) {
            return (entry, .shared)
        }
        return nil
    }

    /// Memory's entry for `key`, looked at under the lock that ends the load when that entry is fresh: a request
    /// that joined before this look is answered the entry memory held at it, and one that comes after starts its
    /// own read, so no request is answered a value memory had already let go before the request came.
    private func finishIfFresh(id: UInt64, key: String, mode: InFlightTable.Mode, now: Date) -> CacheEntry? {
        state.withLockedValue { state in
            guard let entry = memory.peek(key) else { return nil }
            if entry.isFresh(at: now) { _ = state.inFlight.finish(id: id, key: key, mode: mode) }
            return entry
        }
    }

    /// Ends a load whose value the upstream said not to store (`no-store`: served, not stored). A copy stored before
    /// is not the upstream's value any more, so if the load is still current it goes too, as an invalidation of the
    /// key would take it: from memory and the second tier, and, when this instance held or saw one or the load was
    /// a forced refresh, from the shared tier and the fleet's tiers (best effort: the answer does not wait on a
    /// Redis that is down). Without that, a refresh answered `no-store` was followed by the older copy.
    private func completeUnstorable(id: UInt64, key: String, mode: InFlightTable.Mode, copySeen: Bool) async {
        let (current, inMemory) = state.withLockedValue { state -> (Bool, Bool) in
            guard state.inFlight.finish(id: id, key: key, mode: mode) else { return (false, false) }
            writer?.enqueue(.removeAll(KeyScope(kind: .key(key)), nil))
            return (true, memory.remove(key) != nil)
        }
        guard current, inMemory || copySeen else { return }
        _ = try? await invalidateShared(KeyScope(kind: .key(key)))
    }

    /// Ends the load's record; if it was still current (no invalidation detached it), stores `entry`
    /// in memory and queues the write-through, all under the lock so invalidations order with it.
    /// Returns whether `entry` was stored.
    func complete(
        id: UInt64, key: String, mode: InFlightTable.Mode, storing entry: CacheEntry?, writeThrough: Bool = true
    ) -> Bool {
        state.withLockedValue { state in
            guard state.inFlight.finish(id: id, key: key, mode: mode), let entry else { return false }
            let stored = memory.insert(entry)
            if writeThrough { writer?.enqueue(.store(entry, nil)) }
            return stored || writeThrough && writer != nil
        }
    }
}
