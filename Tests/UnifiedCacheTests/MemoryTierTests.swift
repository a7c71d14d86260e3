import Testing
@testable import UnifiedCache

@Suite(.timeLimit(.minutes(10))) struct LRUListTests {
    @Test func evictsLeastRecentlyUsedAndKeepsOrder() {
        var list = LRUList<String, Int>()
        list.set(1, for: "a")
        list.set(2, for: "b")
        list.set(3, for: "c")
        #expect(list.value(for: "a") == 1)  // a is now most recent
        #expect(list.elements.map(\.key) == ["a", "c", "b"])
        #expect(list.removeOldest()?.key == "b")
        #expect(list.set(30, for: "c") == 3)
        #expect(list.elements.map(\.key) == ["c", "a"])
        #expect(list.removeValue(for: "a") == 1)
        #expect(list.peek("a") == nil)
        list.set(4, for: "d")  // reuses a free slot
        #expect(list.elements.map(\.key) == ["d", "c"])
        #expect(list.count == 2)
        #expect(list.removeOldest()?.key == "c")
        #expect(list.removeOldest()?.key == "d")
        #expect(list.removeOldest() == nil)
        #expect(list.isEmpty)
    }

    @Test func peekDoesNotTouchRecency() {
        var list = LRUList<Int, Int>()
        for key in 0..<3 { list.set(key, for: key) }
        #expect(list.peek(0) == 0)
        #expect(list.removeOldest()?.key == 0)
    }
}

@Suite(.timeLimit(.minutes(10))) struct MemoryTierTests {
    @Test func entryBudgetHolds() {
        let tier = MemoryTier(configuration: .init(maxBytes: 1 << 20, maxEntries: 2))
        tier.insert(entry("a"))
        tier.insert(entry("b"))
        _ = tier.entry(for: "a")
        tier.insert(entry("c"))
        #expect(tier.peek("b") == nil)
        #expect(tier.peek("a") != nil && tier.peek("c") != nil)
        let stats = tier.statistics()
        #expect(stats.entries == 2)
        #expect(stats.evictions == 1)
    }

    @Test func byteBudgetHoldsAndReplacementIsAccounted() {
        let small = entry("a", body: String(repeating: "x", count: 100))
        let cost = MemoryTier.cost(of: small)
        let tier = MemoryTier(configuration: .init(maxBytes: cost * 2 + 10, maxEntries: 100))
        tier.insert(small)
        tier.insert(entry("b", body: String(repeating: "y", count: 100)))
        #expect(tier.statistics().bytes == cost * 2)
        let smaller = entry("a", body: String(repeating: "z", count: 50))
        tier.insert(smaller)  // replace: bytes shrink, no eviction
        #expect(MemoryTier.cost(of: smaller) < cost)
        #expect(tier.statistics().bytes == cost + MemoryTier.cost(of: smaller))
        #expect(tier.statistics().evictions == 0)
        tier.insert(entry("c", body: String(repeating: "w", count: 100)))  // evicts b (least recent)
        #expect(tier.peek("b") == nil)
        #expect(tier.statistics().bytes <= cost * 2 + 10)
        #expect(tier.statistics().evictions == 1)
    }

    @Test func oversizeEntryIsNotStoredAndDropsTheOldValue() {
        let tier = MemoryTier(configuration: .init(maxBytes: MemoryTier.cost(of: entry("a")) + 100, maxEntries: 10))
        #expect(tier.insert(entry("a")))
        #expect(!tier.insert(entry("a", body: String(repeating: "x", count: 1000))))
        #expect(tier.peek("a") == nil)
        #expect(tier.statistics().bytes == 0)
    }

    @Test func removeAllWhereAndList() {
        let tier = MemoryTier(configuration: .init())
        tier.insert(entry("u:a", user: "alice"))
        tier.insert(entry("u:b", user: "bob"))
        tier.insert(entry("v:a", user: "alice"))
        #expect(tier.list(prefix: "u:").map(\.key).sorted() == ["u:a", "u:b"])
        #expect(tier.removeAll { $0.user == "alice" }.sorted() == ["u:a", "v:a"])
        #expect(tier.statistics().entries == 1)
        #expect(tier.statistics().bytes == MemoryTier.cost(of: entry("u:b", user: "bob")))
    }
}
