import Clocks
import Foundation
import Logging
import UnifiedCache

/// Invalidation, erasure, listing and expiry. Operations over many entries wait for the start-up index
/// rebuild, so an erasure also reaches files that were not indexed yet.
extension DiskTier {
    @discardableResult
    public func remove(_ key: String) async -> SecondTierRemoval {
        let wasIndexed = index[key] != nil
        switch delete(key) {
        case .deleted: return SecondTierRemoval(removed: [key])
        case .absent: return SecondTierRemoval(removed: wasIndexed ? [key] : [])
        case .failed(let reason): return SecondTierRemoval(failure: reason)
        }
    }

    /// Also the files earlier removals could not delete, when their metadata matches.
    @discardableResult
    public func removeAll(in scope: KeyScope) async -> SecondTierRemoval {
        await waitUntilIndexed()
        let indexed = index.keys(in: scope)
        let kept = undeletable.compactMap { key, file in file.metadata.map(scope.matches) == true ? key : nil }
        var removal = SecondTierRemoval()
        for key in indexed + kept {
            switch delete(key) {
            case .deleted, .absent: removal.removed.append(key)
            case .failed(let reason): removal.failure = reason
            }
        }
        return removal
    }

    public func list(prefix: String, limit: Int) async -> [CacheEntryMetadata] {
        await waitUntilIndexed()
        let now = clock.now()
        let matching = index.metadata { $0.key.hasPrefix(prefix) && now < $0.staleUntil }
        return matching.sorted { $0.key < $1.key }.prefix(max(0, limit)).map { $0 }
    }

    /// Deletes every entry past its stale-until; returns how many.
    @discardableResult
    package func sweepExpired(now: Date) async -> Int {
        await waitUntilIndexed()
        let keys = index.metadata { $0.staleUntil <= now }.map(\.key)
        for key in keys { delete(key) }
        if !keys.isEmpty { logger.debug("disk tier swept expired entries", metadata: ["count": "\(keys.count)"]) }
        return keys.count
    }

    /// Periodically sweeps expired entries and checks the data dir is writable (so `health()` tracks the
    /// disk while no store happens), until the calling task is cancelled; the tier's ticker paces it.
    public func run(every interval: Duration = .seconds(60)) async {
        await elapsed.repeating(every: interval) {
            await sweepExpired(now: clock.now())
            probeWritable()
            return true
        }
    }

    /// The tier's health after a probe of the data dir, at most one a second (a readiness check may come often, and
    /// unauthenticated): /readyz says whether the disk is writable now, and says so again as soon as it is.
    public func checkedHealth() async -> String? {
        let now = elapsed.now()
        if lastProbe.map({ now - $0 >= .seconds(1) }) ?? true {
            lastProbe = now
            probeWritable()
        }
        return health()
    }

    /// Writes and deletes a probe file in the data dir, updating the fault state.
    func probeWritable() {
        let probe = "\(layout.root)/\(temporaryPrefix)probe"
        do throws(FileSystemError) {
            try createFile(probe, in: layout.root, bytes: [])
            try fileSystem.unlink(probe)
            if counters.writeSucceeded() { logger.info("disk tier recovered: data dir writable again") }
        } catch {
            if counters.writeFailed(error.description) {
                logger.warning("disk tier degraded: data dir not writable", metadata: ["error": "\(error)"])
            }
        }
    }
}
