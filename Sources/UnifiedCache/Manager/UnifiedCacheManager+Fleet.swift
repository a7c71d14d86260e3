import Foundation

/// The manager's side of the shared tier: lookups and the fill lease on a local miss, stores after a fetch,
/// and the fleet's invalidations applied to the local tiers.
extension UnifiedCacheManager {
    enum FleetLookup {
        /// Fresh in the shared tier.
        case cached(CacheEntry)
        /// Another instance fetched it while this one waited on its lease.
        case joined(CacheEntry)
        /// Fetch here: with the lease's token when this instance holds it; with a servable stale shared copy.
        case lead(token: String?, stale: CacheEntry?)
    }

    /// How many times a follower whose leader gave up without a value claims the lease again before fetching.
    static let fillClaims = 3

    /// The shared tier's copy of `key`, or its fill lease claimed in the same round trip (a stale copy's lease is
    /// claimed after it): lead, or wait for the leader's value.
    func fleetLookup(_ key: String, shared: any SharedTier) async -> FleetLookup {
        var stale: CacheEntry?
        for _ in 0..<Self.fillClaims {
            let claim: FillClaim
            switch await shared.lookUp(key) {
            case .found(let entry):
                if entry.isFresh(at: clock.now()) { return .cached(entry) }
                if entry.kind == .value, entry.isServableStale(at: clock.now()) { stale = entry }
                claim = await shared.claimFill(key)
            case .claimed(let claimed):
                claim = claimed
            }
            switch claim {
            case .leader(let token): return .lead(token: token, stale: stale)
            case .unavailable: return .lead(token: nil, stale: stale)
            case .follower:
                if let entry = await shared.awaitFill(key), entry.isFresh(at: clock.now()) { return .joined(entry) }
            }
        }
        return .lead(token: nil, stale: stale)
    }

    /// The second tier's copy of `key`; `nil` while the shared tier cannot vouch yet for what the second tier stored
    /// before start-up (a restarted instance catching up with the fleet's log, CONTRACT §6.6).
    func loadSecond(_ key: String) async -> CacheEntry? {
        guard let secondTier, shared?.vouchesForStoredEntries ?? true else { return nil }
        return await secondTier.load(key)
    }

    /// The shared tier's verified copy, `nil` when it has none or cannot be asked.
    func loadShared(_ key: String) async -> CacheEntry? {
        guard let shared else { return nil }
        do { return try await shared.load(key) } catch { return nil }
    }

    /// Writes a fetched value to the shared tier (which tells the fleet that older copies are gone), giving the fill
    /// lease back in the same step when this load holds one; a shared tier that cannot be asked costs the fleet a
    /// hit, not this answer.
    func storeShared(_ entry: CacheEntry, releasing lease: String? = nil) async {
        guard let shared else { return }
        do throws(SharedTierUnavailable) {
            try await shared.storeFetched(entry, releasing: lease)
        } catch {
            logger.debug("shared tier store skipped", metadata: ["key": "\(entry.key)", "reason": "\(error.reason)"])
        }
    }

    /// Applies another instance's event to this instance's tiers, at once for memory (the disk removal is
    /// queued in order with the disk writes). Loads in flight for the keys will not store what they fetched, unless
    /// the event is another instance's newly fetched value (`replaced`): such a load's fetch is as current as it.
    func apply(_ event: SharedTierEvent) {
        let scope: KeyScope
        var detachingLoads = true
        switch event {
        case .invalidate(let shared): scope = KeyScope(kind: shared, userKeys: userKeys)
        case .replaced(let key): (scope, detachingLoads) = (KeyScope(kind: .key(key)), false)
        case .reset: scope = KeyScope(kind: .all)
        case .resetShard(let shard): scope = KeyScope(kind: .all, shard: shard)
        }
        _ = dropLocally(scope, detachingLoads: detachingLoads, done: nil)
        // A reset is logged at info by the shared tier, which knows why.
        logger.debug("fleet invalidation", metadata: ["scope": "\(scope.kind)"])
    }

    /// Drops what `scope` covers from this instance, under the lock so that it orders with loads and writes: loads
    /// in flight are detached (unless `detachingLoads` is false), memory entries removed (returned), the disk removal
    /// queued (`done` gets its keys).
    func dropLocally(
        _ scope: KeyScope, detachingLoads: Bool = true, done: CheckedContinuation<SecondTierRemoval, Never>?
    ) -> [String] {
        state.withLockedValue { state in
            if detachingLoads { state.inFlight.detach(where: scope) }
            state.invalidations &+= 1
            // One key (most changes, and most of a catch-up from the fleet's log) needs no scan of the tier.
            let removed: [String]
            if case .key(let key) = scope.kind {
                removed = memory.remove(key) == nil ? [] : [key]
            } else {
                removed = memory.removeAll(in: scope)
            }
            if let writer {
                writer.enqueue(.removeAll(scope, done))
            } else {
                done?.resume(returning: SecondTierRemoval())
            }
            return removed
        }
    }

    /// Removes what `scope` covers from the shared tier and tells the fleet; throws (after the local part is
    /// done by the caller) when the shared tier cannot be asked.
    func invalidateShared(_ scope: KeyScope) async throws(SharedTierUnavailable) -> [String] {
        guard let shared else { return [] }
        return try await shared.invalidate(scope.kind)
    }

    /// As `invalidateShared`, noting in `failures` (instead of throwing) that the shared tier cannot be asked.
    func invalidateShared(_ scope: KeyScope, noting failures: inout InvalidationFailures) async -> [String] {
        do { return try await invalidateShared(scope) } catch {
            failures.shared = error
            return []
        }
    }
}
