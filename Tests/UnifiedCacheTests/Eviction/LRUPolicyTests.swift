import SeededRandom
import Testing

@testable import UnifiedCache

@Suite struct LRUPolicyTests {
    /// `lru` is the tiers' behaviour before the policies: against a plain list model (most recent first), the same
    /// victims in the same order over a random history of inserts, hits, removals and weights.
    @Test func matchesAPlainLeastRecentlyUsedList() {
        var replay = PolicyReplay(LRUPolicy<Int>(capacity: EvictionCapacity(weight: 400, count: 20)))
        var model: [(key: Int, weight: Int)] = []
        var modelEvicted: [Int] = []
        var random = SplitMix64(seed: 43)
        for _ in 0..<5_000 {
            let key = Int(random.next() % 60)
            if random.next() % 10 == 0, let slot = replay.slots[key] {
                replay.policy.remove(slot)
                replay.forget(key)
                model.removeAll { $0.key == key }
                continue
            }
            let weight = Int(random.next() % 40) + 1
            if let index = model.firstIndex(where: { $0.key == key }) {
                model.insert(model.remove(at: index), at: 0)
            } else {
                model.insert((key, weight), at: 0)
                while model.reduce(0, { $0 + $1.weight }) > 400 || model.count > 20 {
                    modelEvicted.append(model.removeLast().key)
                }
            }
            replay.request(key, weight: weight)
        }
        #expect(replay.evicted == modelEvicted)
        #expect(Set(replay.slots.keys) == Set(model.map(\.key)))
        #expect(replay.policy.statistics.window == nil && replay.policy.statistics.rejected == 0)
    }
}
