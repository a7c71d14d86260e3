import SeededRandom
import Testing
@testable import UnifiedCache

@Suite struct SlotTableTests {
    /// Against a dictionary of slot to hash, through thousands of random adds and removes whose hashes fall on a
    /// few homes (long runs that wrap past the table's end, a removal in the middle of one): after every step each
    /// slot held is found under its hash, each removed one is not, and the count agrees.
    @Test(arguments: [4, 64, 1 << 20]) func findsWhatItHoldsAndNothingElse(hashes: Int) {
        var table = SlotTable()
        var model: [Int: Int] = [:]
        var random = SplitMix64(seed: UInt64(hashes))
        for step in 0..<4_000 {
            let slot = Int(random.next() % 300)
            if let hash = model[slot], random.next() % 3 != 0 {
                #expect(table.remove(hash: hash, where: { $0 == slot }) { model[$0] ?? -1 } == slot, "step \(step)")
                model[slot] = nil
            } else if model[slot] == nil {
                // Near the top of the table too, so that runs wrap past its end.
                let hash = random.next() % 2 == 0 ? Int(random.next() % UInt64(hashes)) : -1 - Int(random.next() % 8)
                model[slot] = hash
                table.add(slot, hash: hash) { model[$0] ?? -1 }
            }
            #expect(table.count == model.count, "step \(step)")
            guard step % 97 == 0 || step > 3_900 else { continue }
            #expect(Set(table.slots) == Set(model.keys), "step \(step)")
            for candidate in 0..<300 {
                let found = table.slot(hash: model[candidate] ?? candidate % hashes) { $0 == candidate }
                #expect(found == model[candidate].map { _ in candidate }, "step \(step) slot \(candidate)")
            }
        }
    }

    /// A look-up offers the caller each slot of the run from the hash's home, and returns the one the caller
    /// confirms: the same hash for two keys is told apart by the caller (by the key in the slot), not by the table.
    @Test func aSharedHashIsToldApartByTheCaller() {
        var table = SlotTable()
        for slot in 0..<5 { table.add(slot, hash: 7) { _ in 7 } }
        var offered: [Int] = []
        #expect(table.slot(hash: 7) { offered.append($0); return $0 == 3 } == 3)
        #expect(offered.last == 3 && Set(offered).count == offered.count && offered.allSatisfy((0..<5).contains))
        #expect(table.slot(hash: 7) { _ in false } == nil)
        #expect(table.slot(hash: 7 + 16) { $0 == 9 } == nil)
        #expect(table.remove(hash: 7, where: { $0 == 1 }) { _ in 7 } == 1)
        #expect(table.remove(hash: 7, where: { $0 == 9 }) { _ in 7 } == nil)
        #expect(table.count == 4)
        #expect(table.slot(hash: 7) { $0 == 4 } == 4)
        #expect(table.slot(hash: 7) { $0 == 1 } == nil)
    }

    /// The memory tier through its slot table: a tier of 1,000 entries past its budget (evictions), replacements and
    /// removals finds every entry its policy counts and no other.
    @Test(arguments: EvictionKind.allCases) func theMemoryTierFindsWhatItsPolicyCounts(eviction: EvictionKind) {
        let tier = MemoryTier(configuration: .init(maxBytes: 1 << 30, maxEntries: 1_000, eviction: eviction))
        var random = SplitMix64(seed: 11)
        for _ in 0..<20_000 {
            let key = "key-\(random.next() % 3_000)"
            if random.next() % 5 == 0 { tier.remove(key) } else { tier.insert(entry(key)) }
        }
        let found = (0..<3_000).filter { tier.peek("key-\($0)") != nil }
        #expect(found.count == tier.statistics().entries)
        #expect(found.count > 900)
        for key in found { #expect(tier.peek("key-\(key)")?.key == "key-\(key)") }
    }
}
