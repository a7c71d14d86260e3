import Foundation
import TestSupport
import Testing
import UnifiedCache

@testable import DiskTier

/// CONTRACT §9.7 in the disk tier: a sealed file's clear header no longer gives the body's length, so an entry
/// indexed from its header alone (the start-up scan) lists the sealed length, an upper bound, until a read opens it;
/// the byte budget counts file sizes either way.
@Suite(.timeLimit(.minutes(10))) struct DiskTierSealedLengthTests {
    @Test func aScannedEntryListsAnUpperBoundUntilItIsRead() async throws {
        try await withTemporaryFolder { dir in
            let entry = makeEntry("raw:answer", body: Array(#"{"answered":true}"#.utf8))
            let writer = try await openTier(dir, codec: DiskTierSealingTests.codec("k1"))
            await writer.waitUntilIndexed()
            #expect(await writer.store(entry))
            #expect(await writer.list(prefix: "raw:", limit: 10).map(\.bytes) == [entry.body.count])

            let restarted = try await openTier(dir, codec: DiskTierSealingTests.codec("k1"))
            await restarted.waitUntilIndexed()
            let fileBytes = filesOnDisk(dir).reduce(0) { $0 + $1.size }
            #expect(restarted.statistics().bytes == fileBytes)
            let bound = try #require(await restarted.list(prefix: "raw:", limit: 10).first?.bytes)
            #expect(bound >= 64 && bound > entry.body.count)
            #expect(await restarted.load(entry.key) == entry)
            #expect(await restarted.list(prefix: "raw:", limit: 10).map(\.bytes) == [entry.body.count])
            #expect(restarted.statistics().bytes == fileBytes)
        }
    }
}
