import Clocks
import Foundation

extension UnifiedCacheManager {
    /// CONTRACT §15.1: with `refreshInterval` set, a forced refresh of a key whose stored copy (memory, then the second
    /// tier, then the shared tier) is fresh and was fetched less than that long ago is answered from that copy: a hit
    /// (counted as one, a remembered 404 included), marked `refreshThrottled`, with no fetch and nothing charged to
    /// anyone's budget. `nil` (nothing counted) when refreshes are not throttled or no such copy is stored: the
    /// refresh fetches as usual.
    func throttledRefresh(_ request: FetchRequest) async throws(CacheError) -> CacheResult? {
        guard refreshInterval > .zero else { return nil }
        let found: (entry: CacheEntry, tier: CacheTier)?
        if let entry = memory.entry(for: request.key), isRecent(entry) {
            found = (entry, .memory)
        } else if let entry = await loadSecond(request.key), isRecent(entry) {
            found = (entry, .disk)
        } else if let entry = await loadShared(request.key), isRecent(entry) {
            found = (entry, .shared)
        } else {
            found = nil
        }
        guard let (entry, tier) = found else { return nil }
        count(.hit, request, tier: tier)
        guard entry.kind == .value else { throw .notFound(.hit, tier: tier, stored: false) }
        var result = CacheResult(entry: entry, outcome: .hit, tier: tier, stored: false, now: clock.now())
        result.refreshThrottled = true
        return result
    }

    /// Fresh, and fetched less than `refreshInterval` ago.
    private func isRecent(_ entry: CacheEntry) -> Bool {
        let now = clock.now()
        return entry.isFresh(at: now) && now.duration(since: entry.storedAt) < refreshInterval
    }
}
