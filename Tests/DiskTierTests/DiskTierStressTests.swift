import Foundation
import TestSupport
import Testing
import UnifiedCache

@testable import DiskTier

/// Many tasks at once, racing the start-up rebuild: the tier's index, its counters and the files agree
/// at the end, and a load only ever returns a complete value of the key asked for.
@Suite(.timeLimit(.minutes(10))) struct DiskTierStressTests {
    static func body(for key: String) -> [UInt8] {
        Array(String(repeating: key, count: 1 + key.utf8.count * 13 % 200).utf8)
    }

    @Test func concurrentOperationsKeepIndexCountersAndFilesInAgreement() async throws {
        try await withTemporaryFolder { dir in
            let seed = try await openTier(dir)
            for i in 0..<60 { await seed.store(makeEntry("k\(i)", body: Self.body(for: "k\(i)"), user: "u\(i % 3)")) }

            let tier = try await openTier(dir, limit: 48 * 1024)
            let statistics = tier.statistics()
            await withTaskGroup(of: Void.self) { group in
                for worker in 0..<8 {
                    group.addTask {
                        for step in 0..<150 {
                            let key = "k\((worker * 31 + step * 7) % 80)"
                            switch (worker + step) % 5 {
                            case 0, 1:
                                await tier.store(makeEntry(key, body: Self.body(for: key), user: "u\(step % 3)"))
                            case 2:
                                if let entry = await tier.load(key) {
                                    #expect(entry.key == key && entry.body == Self.body(for: key))
                                }
                            case 3: await tier.remove(key)
                            default:
                                if step % 25 == 0 { _ = await tier.removeAll(in: KeyScope(kind: .user("u\(worker % 3)"))) }
                                _ = await tier.list(prefix: "k1", limit: 5)
                                _ = tier.statistics()
                            }
                        }
                    }
                }
            }
            await tier.waitUntilIndexed()
            let files = filesOnDisk(dir)
            let stats = tier.statistics()
            #expect(stats.entries == files.count)
            #expect(stats.bytes == files.reduce(0) { $0 + $1.size })
            #expect(stats.bytes <= 48 * 1024)
            #expect(stats.corrupt == 0 && stats.writeErrors == 0 && stats.readErrors == 0)
            #expect(statistics.limitBytes == 48 * 1024)
            for entry in await tier.list(prefix: "", limit: 1000) {
                #expect(await tier.load(entry.key)?.body == Self.body(for: entry.key))
            }
        }
    }
}
