import Foundation
import TestSupport
import Testing
import UnifiedCache

@testable import DiskTier

@Suite(.timeLimit(.minutes(10))) struct DiskTierBudgetTests {
    @Test func theByteBudgetHoldsAfterTenTimesItsSizeIsWritten() async throws {
        try await withTemporaryFolder { dir in
            let limit = 64 * 1024
            let tier = try await openTier(dir, limit: limit)
            var written = 0
            var i = 0
            while written < 10 * limit {
                let entry = makeEntry("k\(i)", body: Array(repeating: UInt8(i % 256), count: 500 + (i * 131) % 3000))
                #expect(await tier.store(entry))
                written += entry.body.count
                i += 1
                if i.isMultiple(of: 10) { #expect(filesOnDisk(dir).reduce(0) { $0 + $1.size } <= limit) }
            }
            let stats = tier.statistics()
            #expect(stats.bytes == filesOnDisk(dir).reduce(0) { $0 + $1.size })
            #expect(stats.bytes <= limit)
            #expect(stats.entries == filesOnDisk(dir).count)
            #expect(stats.evictions == i - stats.entries)
            #expect(stats.limitBytes == limit)
            // The newest entry is always kept.
            #expect(await tier.load("k\(i - 1)") != nil)
        }
    }

    /// `readNow`: the read that makes k0 recently used is a disk hit answered on the calling thread (`loadNow`, given
    /// the key's hash by the memory tier's look-up), counted as an access when the tier next makes room: found in the
    /// index by that hash.
    @Test(arguments: [false, true]) func leastRecentlyUsedEntriesGoFirst(readNow: Bool) async throws {
        try await withTemporaryFolder { dir in
            let body = Array(repeating: UInt8(7), count: 900)
            let fileSize = EntryFormat.encode(makeEntry("k0", body: body)).count
            let tier = try await openTier(dir, limit: fileSize * 4)
            for i in 0..<4 { await tier.store(makeEntry("k\(i)", body: body)) }
            let read = readNow ? tier.loadNow("k0", hash: KeyHash.of("k0")) : await tier.load("k0")
            #expect(read != nil)  // k1 is now the least recently used
            await tier.store(makeEntry("k4", body: body))
            #expect(await tier.load("k1") == nil)
            #expect(await tier.load("k2") != nil)  // order now: k3 (oldest), k0, k4, k2
            await tier.store(makeEntry("k5", body: body))
            #expect(await tier.load("k3") == nil)
            for key in ["k0", "k2", "k4", "k5"] { #expect(await tier.load(key) != nil) }
            #expect(tier.statistics().evictions == 2)
        }
    }

    @Test func anEntryLargerThanTheBudgetIsRefusedWithoutEvictingOthers() async throws {
        try await withTemporaryFolder { dir in
            let tier = try await openTier(dir, limit: 4096)
            await tier.store(makeEntry("small"))
            await tier.store(makeEntry("huge"))
            #expect(!(await tier.store(makeEntry("huge", body: Array(repeating: 0, count: 5000)))))
            #expect(await tier.load("small") != nil)
            #expect(await tier.load("huge") == nil)  // the older version is gone, not served
            #expect(tier.statistics().entries == 1)
            #expect(tier.statistics().bytes == filesOnDisk(dir).reduce(0) { $0 + $1.size })
            #expect(tier.statistics().writeErrors == 0)
            #expect(tier.health() == nil)
        }
    }

    @Test func aRestartOverBudgetEvictsTheOldestWritten() async throws {
        try await withTemporaryFolder { dir in
            let body = Array(repeating: UInt8(1), count: 1000)
            let fileSize = EntryFormat.encode(makeEntry("k0", body: body)).count
            let first = try await openTier(dir)
            for i in 0..<6 {
                await first.store(makeEntry("k\(i)", body: body))
                // Distinct modification times, oldest first, without waiting.
                let date = Date(timeIntervalSince1970: 1_000_000 + Double(i) * 10)
                try FileManager.default.setAttributes([.modificationDate: date], ofItemAtPath: entryPath(dir, "k\(i)"))
            }
            let second = try await openTier(dir, limit: fileSize * 4)
            await second.waitUntilIndexed()
            #expect(second.statistics().entries == 4)
            #expect(second.statistics().evictions == 2)
            #expect(await second.load("k0") == nil)
            #expect(await second.load("k1") == nil)
            #expect(await second.load("k5") != nil)
        }
    }
}
