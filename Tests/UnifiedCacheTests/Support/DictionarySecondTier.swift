import NIOConcurrencyHelpers
import TestSupport
import UnifiedCache

/// A second tier in a dictionary, for manager tests.
final class DictionarySecondTier: SecondTier {
    private let entries = NIOLockedValueBox([String: CacheEntry]())
    private let storeCalls = NIOLockedValueBox(0)
    /// While set, every store fails (a full disk): the key's previous entry is dropped, as the disk tier does.
    let refusesWrites = NIOLockedValueBox(false)
    /// While set, every removal fails (a read-only disk): the entries stay stored.
    let refusesRemovals = NIOLockedValueBox(false)

    /// Whether `loadNow` answers (as the disk tier does for a clean file); `duringReadNow` runs inside it, after
    /// the read, to change the cache meanwhile.
    let readsNow: Bool
    let duringReadNow = NIOLockedValueBox<(@Sendable () -> Void)?>(nil)
    /// While set, `remove` waits until `openRemovals()` (a second-tier operation kept queued).
    private let removals = Latch(open: true)
    private let removalCount = NIOLockedValueBox(0)

    init(_ initial: [CacheEntry] = [], readsNow: Bool = false) {
        self.readsNow = readsNow
        entries.withLockedValue { dict in for entry in initial { dict[entry.key] = entry } }
    }

    /// Stores `entry` under another key's name (a file moved by hand), where `loadNow(key)` finds it.
    func storeMisplaced(_ entry: CacheEntry, as key: String) {
        entries.withLockedValue { $0[key] = entry }
    }

    func loadNow(_ key: String, hash: UInt32) -> CacheEntry? {
        assert(hash == KeyHash.of(key), "the manager hands down the key's own hash")
        guard readsNow else { return nil }
        let entry = entries.withLockedValue { $0[key] }
        duringReadNow.withLockedValue { $0 }?()
        return entry
    }

    func holdRemovals() { removals.close() }

    var removalsStarted: Int { removalCount.withLockedValue { $0 } }

    func openRemovals() { removals.open() }

    var stored: [String: CacheEntry] { entries.withLockedValue { $0 } }
    var stores: Int { storeCalls.withLockedValue { $0 } }

    func load(_ key: String) async -> CacheEntry? { entries.withLockedValue { $0[key] } }

    func store(_ entry: CacheEntry) async -> Bool {
        storeCalls.withLockedValue { $0 += 1 }
        let refuse = refusesWrites.withLockedValue { $0 }
        entries.withLockedValue { $0[entry.key] = refuse ? nil : entry }
        return !refuse
    }

    func remove(_ key: String) async -> SecondTierRemoval {
        removalCount.withLockedValue { $0 += 1 }
        await removals.wait()
        if refusesRemovals.withLockedValue({ $0 }) { return SecondTierRemoval(failure: "read-only file system") }
        return SecondTierRemoval(removed: entries.withLockedValue { $0.removeValue(forKey: key) == nil ? [] : [key] })
    }

    func removeAll(in scope: KeyScope) async -> SecondTierRemoval {
        if refusesRemovals.withLockedValue({ $0 }) { return SecondTierRemoval(failure: "read-only file system") }
        return SecondTierRemoval(removed: entries.withLockedValue { dict in
            let keys = dict.values.filter { scope.matches($0.metadata) }.map(\.key)
            for key in keys { dict[key] = nil }
            return keys
        })
    }

    func list(prefix: String, limit: Int) async -> [CacheEntryMetadata] {
        entries.withLockedValue { dict in
            let matching = dict.values.filter { $0.key.hasPrefix(prefix) }.map(\.metadata)
            return Array(matching.sorted { $0.key < $1.key }.prefix(limit))
        }
    }

    func statistics() -> SecondTierStatistics {
        var statistics = SecondTierStatistics()
        statistics.decisions.evictions = 2
        (statistics.entries, statistics.bytes) = entries.withLockedValue { dict in
            (dict.count, dict.values.reduce(0) { $0 + $1.body.count })
        }
        return statistics
    }

    func health() -> String? { refusesWrites.withLockedValue { $0 } ? "no space left on device" : nil }
}
