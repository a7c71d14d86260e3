import Testing
import UnifiedCache

@testable import DiskTier

@Suite(.timeLimit(.minutes(10))) struct DiskIndexTests {
    func indexed(_ key: String, size: Int) -> IndexedEntry {
        IndexedEntry(metadata: makeEntry(key).metadata, fileSize: size)
    }

    /// Under `lru`, the victims are the least recently used, as the index always chose them before the policies.
    @Test func lruOrdersByUseAndAccountsBytes() {
        var index = DiskIndex(eviction: .lru, limitBytes: 60)
        index.insert("a", indexed("a", size: 10))
        index.insert("b", indexed("b", size: 20))
        index.insert("c", indexed("c", size: 30))
        #expect(index.totalBytes == 60)
        index.touch("a")
        index.insert("b", indexed("b", size: 5))  // replacing counts as a use
        #expect(index.totalBytes == 45)
        index.insert("old", indexed("old", size: 1), leastRecent: true)
        #expect(index.remove("old")?.fileSize == 1)
        #expect(index.remove("old") == nil)
        index.insert("d", indexed("d", size: 50))  // 95 bytes: c (least recent) and a go, never d
        #expect(index.evict(keeping: "d") == ["c", "a"])
        #expect(index.count == 2 && index.totalBytes == 55)
        #expect(index["c"] == nil && index["b"]?.fileSize == 5)
        index.insert("again", indexed("again", size: 3))  // reuses a freed slot
        #expect(index["again"]?.fileSize == 3 && index["again"]?.metadata.key == "again")
    }

    /// Under `tinylfu`, a store's new file always stays, and an entry asked for often outlives one asked for once.
    @Test func tinyLFUKeepsTheNewFileAndTheFrequentOnes() {
        var index = DiskIndex(eviction: .tinyLFU, limitBytes: 100)
        for key in ["hot", "cold"] { index.insert(key, indexed(key, size: 40)) }
        for _ in 0..<5 { index.touch("hot") }
        index.insert("new", indexed("new", size: 40))
        #expect(index.evict(keeping: "new") == ["cold"])
        #expect(index["hot"] != nil && index["new"] != nil && index.totalBytes == 80)
        // A file larger than what is left of the budget still enters; only others compete.
        index.insert("big", indexed("big", size: 90))
        let gone = index.evict(keeping: "big")
        #expect(Set(gone) == ["hot", "new"])
        #expect(index.count == 1 && index.totalBytes == 90)
    }

    @Test func filesFoundAtStartUpAreKeptUntilOthersNeedTheRoom() {
        var index = DiskIndex(eviction: .tinyLFU, limitBytes: 30)
        for key in ["x", "y", "z"] { index.insert(key, indexed(key, size: 10), leastRecent: true) }
        #expect(index.evict(keeping: nil).isEmpty)
        index.insert("w", indexed("w", size: 10))
        // The eldest found (the last one inserted as the least recent) goes first.
        #expect(index.evict(keeping: "w") == ["z"])
        #expect(index.count == 3)
    }

    /// The index against a dictionary over a random history of stores, removals and look-ups among few keys, so that
    /// the slot table's runs collide, wrap around its end, grow and shift back on removal (an unbounded budget: nothing
    /// is evicted, so the model is exact).
    @Test(arguments: [1, 2, 3] as [UInt64]) func findsEveryKeyItHoldsThroughARandomHistory(seed: UInt64) {
        var random = PolicyRandom(seed: seed)
        var index = DiskIndex(eviction: .tinyLFU, limitBytes: .max)
        var model: [String: Int] = [:]
        for step in 0..<20_000 {
            let key = "k\(Int.random(in: 0..<300, using: &random))"
            switch Int.random(in: 0..<3, using: &random) {
            case 0:
                index.insert(key, indexed(key, size: step + 1))
                model[key] = step + 1
            case 1:
                #expect(index.remove(key)?.fileSize == model.removeValue(forKey: key))
            default:
                #expect(index[key]?.fileSize == model[key])
            }
            #expect(index.count == model.count)
        }
        for key in (0..<300).map({ "k\($0)" }) { #expect(index[key]?.metadata.key == model[key].map { _ in key }) }
        #expect(Set(index.metadata { _ in true }.map(\.key)) == Set(model.keys))
        // A predicate sees each held entry's own metadata, and only the entries it takes come back.
        let even = Set(model.keys.filter { Int($0.dropFirst())! % 2 == 0 })
        #expect(Set(index.metadata { Int($0.key.dropFirst())! % 2 == 0 }.map(\.key)) == even)
        // A scope reads each held entry in place: free slots never match, not even `all`.
        #expect(Set(index.keys(in: KeyScope(kind: .all))) == Set(model.keys))
        #expect(Set(index.keys(in: KeyScope(kind: .prefix("k1")))) == Set(model.keys.filter { $0.hasPrefix("k1") }))
    }

    /// Evicted keys leave the slot table with their slots: the survivors are still found, the evicted are not, and a
    /// start-up's reserved capacity holds every file found.
    @Test func evictionsAndStartUpsKeepTheTableExact() {
        var index = DiskIndex(eviction: .lru, limitBytes: 5_000)
        index.reserveCapacity(3_000)
        for number in 0..<3_000 { index.insert("f\(number)", indexed("f\(number)", size: 1), leastRecent: true) }
        #expect(index.count == 3_000)
        index.insert("big", indexed("big", size: 4_000))
        let evicted = index.evict(keeping: "big")
        #expect(evicted.count == 2_000 && index.count == 1_001)
        for key in evicted { #expect(index[key] == nil) }
        let kept = Set((0..<3_000).map { "f\($0)" }).subtracting(evicted)
        for key in kept { #expect(index[key]?.metadata.key == key) }
        #expect(index["big"]?.fileSize == 4_000 && index.totalBytes == 5_000)
    }
}
