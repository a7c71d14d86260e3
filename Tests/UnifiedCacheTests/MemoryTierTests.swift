import SeededRandom
import Testing
@testable import UnifiedCache

@Suite(.timeLimit(.minutes(10))) struct MemoryTierTests {
    /// `--eviction lru` keeps the tier's behaviour before the policies: the least recently used entry goes, and a hit
    /// recorded in the read buffer counts before the next insert chooses a victim.
    @Test func entryBudgetHolds() {
        let tier = MemoryTier(configuration: .init(maxBytes: 1 << 20, maxEntries: 2, eviction: .lru))
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

    /// A reader whose ring of the read buffer is full drains it and its own access goes with the rest: one thread's
    /// seventeenth hit in a row is not lost. Under `lru` the keys hit move ahead of those not hit, all seventeen.
    @Test func theHitThatFindsItsRingFullIsRecordedToo() {
        let tier = MemoryTier(configuration: .init(maxBytes: 1 << 30, maxEntries: 20, eviction: .lru))
        for index in 0..<20 { tier.insert(entry("k\(index)")) }
        for index in 0...ReadBuffer.ringSize { #expect(tier.entry(for: "k\(index)") != nil) }
        for index in 0..<4 { tier.insert(entry("new\(index)")) }
        let kept = (0..<20).filter { tier.peek("k\($0)") != nil }
        #expect(kept == Array(1...ReadBuffer.ringSize))
    }

    /// A hit given from an earlier handle (`hit(sameAs:near:)`, the router's shortcut) records the access under the
    /// entry's current handle: once its key left and came back into the same slot (a new generation), under `lru` the
    /// entry hit moves ahead of one stored after it (recorded under the earlier handle, the access would be dropped as
    /// outdated, and the entry evicted first).
    @Test func aHitFromAnEarlierHandleRecordsTheCurrentOne() throws {
        let (tier, value, earlier) = try handleOfAKeyThatLeft(maxEntries: 2)
        tier.insert(value)
        let current = try #require(tier.located("a")).handle
        #expect(MemoryMap.slot(of: current) == MemoryMap.slot(of: earlier) && current != earlier)
        tier.insert(entry("b"))
        #expect(tier.hit(sameAs: value, near: earlier))
        tier.insert(entry("c"))
        #expect(tier.peek("a") != nil && tier.peek("b") == nil)
    }

    /// An earlier handle whose slot holds another key, or no slot at all, is only where the look starts: the key is
    /// looked up, and the hit is the same as without the handle.
    @Test func aHitFromAHandleWhoseSlotMovedOnLooksTheKeyUp() throws {
        let (tier, value, earlier) = try handleOfAKeyThatLeft(maxEntries: 4)
        tier.insert(entry("b"))
        #expect(tier.peek("a") == nil && !tier.hit(sameAs: value, near: earlier))
        tier.insert(value)
        #expect(MemoryMap.slot(of: try #require(tier.located("a")).handle) != MemoryMap.slot(of: earlier))
        #expect(tier.hit(sameAs: value, near: earlier))
        #expect(tier.hit(sameAs: value, near: 99))
        #expect(!tier.hit(sameAs: entry("a", body: "another"), near: earlier))
    }

    /// An `lru` tier that held `a` (`value`) under `handle`, then let it go.
    private func handleOfAKeyThatLeft(maxEntries: Int) throws -> (tier: MemoryTier, value: CacheEntry, handle: UInt64) {
        let tier = MemoryTier(configuration: .init(maxBytes: 1 << 20, maxEntries: maxEntries, eviction: .lru))
        let value = entry("a")
        tier.insert(value)
        let handle = try #require(tier.located("a")).handle
        _ = tier.remove("a")
        return (tier, value, handle)
    }

    @Test func byteBudgetHoldsAndReplacementIsAccounted() {
        let small = entry("a", body: String(repeating: "x", count: 100))
        let cost = MemoryTier.cost(of: small)
        let tier = MemoryTier(configuration: .init(maxBytes: cost * 2 + 10, maxEntries: 100, eviction: .lru))
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

    @Test(arguments: EvictionKind.allCases) func oversizeEntryIsNotStoredAndDropsTheOldValue(eviction: EvictionKind) {
        let tier = MemoryTier(
            configuration: .init(maxBytes: MemoryTier.cost(of: entry("a")) + 100, maxEntries: 10, eviction: eviction))
        #expect(tier.insert(entry("a")))
        #expect(!tier.insert(entry("a", body: String(repeating: "x", count: 1000))))
        #expect(tier.peek("a") == nil)
        #expect(tier.statistics().bytes == 0)
    }

    /// A promotion (a value read from a tier below) never replaces what memory holds, and says so; an absent key is
    /// stored as `insert` stores it, and one too large for the budget is still reported absent (the read is served).
    @Test(arguments: EvictionKind.allCases) func aPromotionNeverReplacesAHeldValue(eviction: EvictionKind) {
        let tier = MemoryTier(
            configuration: .init(maxBytes: MemoryTier.cost(of: entry("a")) * 4, maxEntries: 10, eviction: eviction))
        #expect(tier.insert(entry("a", body: "held")))
        #expect(!tier.promote(entry("a", body: "from disk")))
        #expect(tier.peek("a")?.body == Array("held".utf8))
        #expect(tier.promote(entry("b", body: "from disk")))
        #expect(tier.peek("b")?.body == Array("from disk".utf8))
        #expect(tier.promote(entry("c", body: String(repeating: "x", count: 10_000))))
        #expect(tier.peek("c") == nil)
        #expect(tier.statistics().entries == 2)
    }

    @Test(arguments: EvictionKind.allCases) func removeAllInScopeAndList(eviction: EvictionKind) {
        let tier = MemoryTier(configuration: .init(eviction: eviction))
        tier.insert(entry("u:a", user: "alice"))
        tier.insert(entry("u:b", user: "bob"))
        tier.insert(entry("v:a", user: "alice"))
        #expect(tier.list(prefix: "u:").map(\.key).sorted() == ["u:a", "u:b"])
        #expect(tier.removeAll(in: KeyScope(kind: .user("alice"))).sorted() == ["u:a", "v:a"])
        #expect(tier.statistics().entries == 1)
        #expect(tier.statistics().bytes == MemoryTier.cost(of: entry("u:b", user: "bob")))
    }

    /// Each scope the fleet sends removes exactly what it covers, read from the entries in place.
    @Test func everyScopeRemovesWhatItCovers() {
        let userKeys = UserKeys(prefixes: ["sub:"])
        let entries = [
            entry("sub:carol", namespace: "subscription", user: "carol"),
            entry("prof:carol", namespace: "profile", user: "carol"),
            entry("sub:dave", namespace: "subscription", user: "dave"),
            entry("sub:carol:old", namespace: "raw", user: nil),
            entry("raw:x", namespace: "raw", user: nil),
        ]
        let cases: [(SharedScope, [String])] = [
            (.key("sub:dave"), ["sub:dave"]),
            (.prefix("sub:"), ["sub:carol", "sub:carol:old", "sub:dave"]),
            (.namespaces(["subscription"], user: "carol"), ["sub:carol"]),
            (.namespaces(["subscription", "profile"], user: "carol"), ["prof:carol", "sub:carol"]),
            (.user("carol"), ["prof:carol", "sub:carol", "sub:carol:old"]),
            (.user("nobody"), []),
            (.all, ["prof:carol", "raw:x", "sub:carol", "sub:carol:old", "sub:dave"]),
        ]
        for (scope, expected) in cases {
            let tier = MemoryTier(configuration: .init())
            for stored in entries { tier.insert(stored) }
            #expect(tier.removeAll(in: KeyScope(kind: scope, userKeys: userKeys)).sorted() == expected, "\(scope)")
            #expect(tier.statistics().entries == entries.count - expected.count, "\(scope)")
            for key in expected { #expect(tier.peek(key) == nil, "\(scope) \(key)") }
        }
    }

    /// Both budgets hold after every call, whatever the policy and the mix of sizes, and a stored entry is always the
    /// one just inserted.
    @Test(arguments: EvictionKind.allCases) func bothBudgetsHoldAfterEveryCall(eviction: EvictionKind) {
        let budget = 20 * MemoryTier.cost(of: entry("k0"))
        let tier = MemoryTier(configuration: .init(maxBytes: budget, maxEntries: 12, eviction: eviction))
        var random = SplitMix64(seed: 43)
        for step in 0..<3_000 {
            let key = "k\(random.next() % 200)"
            switch random.next() % 4 {
            case 0: tier.remove(key)
            case 1: _ = tier.entry(for: key)
            default:
                let body = String(repeating: "x", count: Int(random.next() % 3_000))
                #expect(tier.insert(entry(key, body: body)))
                #expect(tier.peek(key)?.body.count == body.utf8.count, "step \(step)")
            }
            let statistics = tier.statistics()
            #expect(statistics.bytes <= budget && statistics.entries <= 12, "step \(step)")
        }
        let statistics = tier.statistics()
        #expect(statistics.evictions > 0)
        #expect((statistics.decisions.window != nil) == (eviction == .tinyLFU))
    }

    /// Hits go through the read buffer, never the policy's lock, and still reach the policy: under `tinylfu` an entry
    /// asked for often survives a flood of entries asked for once, as it does not under `lru`.
    @Test(arguments: EvictionKind.allCases) func hitsRecordedOffTheLockReachThePolicy(eviction: EvictionKind) {
        let tier = MemoryTier(configuration: .init(maxBytes: 1 << 30, maxEntries: 50, eviction: eviction))
        tier.insert(entry("hot"))
        for _ in 0..<10 { #expect(tier.entry(for: "hot") != nil) }
        for index in 0..<500 { tier.insert(entry("once\(index)")) }
        #expect((tier.peek("hot") != nil) == (eviction == .tinyLFU))
        let statistics = tier.statistics()
        #expect(statistics.entries == 50 && statistics.evictions == 451)
        if eviction == .tinyLFU { #expect(statistics.decisions.rejected > 0 && statistics.decisions.admitted > 0) }
    }

    /// Many readers and writers at once: every read sees a whole entry and the budgets hold at the end (the read
    /// buffer's rings are written lock-free and drained under the policy's lock; ThreadSanitizer runs this too).
    @Test func concurrentReadersAndWritersKeepTheBudgets() async {
        let tier = MemoryTier(configuration: .init(maxBytes: 1 << 30, maxEntries: 64))
        await withTaskGroup(of: Void.self) { group in
            for worker in 0..<8 {
                group.addTask {
                    var random = SplitMix64(seed: UInt64(worker))
                    for _ in 0..<2_000 {
                        let key = "k\(random.next() % 128)"
                        if random.next() % 4 == 0 {
                            tier.insert(entry(key))
                        } else if let found = tier.entry(for: key) {
                            #expect(found.key == key)
                        }
                    }
                }
            }
        }
        #expect(tier.statistics().entries <= 64)
    }
}
