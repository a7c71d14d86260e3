import Testing
import UnifiedCache

@testable import DiskTier

@Suite(.timeLimit(.minutes(10))) struct LRUIndexTests {
    func indexed(_ key: String, size: Int) -> IndexedEntry {
        IndexedEntry(metadata: makeEntry(key).metadata, fileSize: size)
    }

    @Test func ordersByUseAndAccountsBytes() {
        var index = LRUIndex()
        index.insert("a", indexed("a", size: 10))
        index.insert("b", indexed("b", size: 20))
        index.insert("c", indexed("c", size: 30))
        #expect(index.totalBytes == 60)
        #expect(index.leastRecentKey == "a")
        index.touch("a")
        #expect(index.leastRecentKey == "b")
        index.insert("b", indexed("b", size: 5))  // replacing makes it the most recent
        #expect(index.leastRecentKey == "c")
        #expect(index.totalBytes == 45)
        index.insert("old", indexed("old", size: 1), leastRecent: true)
        #expect(index.leastRecentKey == "old")
        #expect(index.remove("old")?.fileSize == 1)
        #expect(index.remove("old") == nil)
        var order: [String] = []
        while let key = index.leastRecentKey {
            order.append(key)
            index.remove(key)
        }
        #expect(order == ["c", "a", "b"])
        #expect(index.count == 0 && index.totalBytes == 0)
        index.insert("again", indexed("again", size: 3))  // reuses a freed slot
        #expect(index.leastRecentKey == "again" && index["again"]?.fileSize == 3)
    }
}
