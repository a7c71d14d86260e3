import Foundation
import TestSupport
import Testing
import UnifiedCache

@testable import DiskTier

/// CONTRACT §9.2 in the disk tier: with a key ring, a plaintext file (which needs no secret to forge) fails to open
/// like a sealed one that does not: never served, deleted, counted undecryptable, and a rekey deletes it instead of
/// sealing the forgery into a genuine entry. Under a migration (`--encryption-migrate`) it is read and sealed.
@Suite(.timeLimit(.minutes(10))) struct DiskTierPlaintextPolicyTests {
    let forged = makeEntry("raw:forged", body: Array(#"{"answered":true,"by":"whoever can write the folder"}"#.utf8))

    /// Writes `entry` in the clear where the tier keeps `entry.key`'s file, as a forger with write access would.
    func forge(_ entry: CacheEntry, in dir: String) throws {
        try plant(EntryFormat.encode(entry), as: entry.key, in: dir)
    }

    @Test func aForgedPlaintextFileIsNotServedUnderAKeyRing() async throws {
        try await withTemporaryFolder { dir in
            let tier = try await openTier(dir, codec: DiskTierSealingTests.codec("k1"))
            await tier.waitUntilIndexed()
            try forge(forged, in: dir)
            #expect(tier.loadNow(forged.key) == nil)
            #expect(await tier.load(forged.key) == nil)
            #expect(!FileManager.default.fileExists(atPath: entryPath(dir, forged.key)))
            #expect(tier.statistics().undecryptable == 1)
            #expect(tier.statistics().corrupt == 0)
            #expect(tier.statistics().entries == 0)
        }
    }

    /// The start-up scan deletes it, as a read would: never indexed, listed or counted as an entry meanwhile.
    @Test func aPlaintextFileFoundAtStartUpIsDeletedByTheScan() async throws {
        try await withTemporaryFolder { dir in
            try forge(forged, in: dir)
            let tier = try await openTier(dir, codec: DiskTierSealingTests.codec("k1"))
            await tier.waitUntilIndexed()
            #expect(filesOnDisk(dir).isEmpty)
            #expect(tier.statistics().undecryptable == 1)
            #expect(tier.statistics().entries == 0 && tier.statistics().bytes == 0)
            #expect(await tier.list(prefix: "", limit: 10).isEmpty)
            #expect(await tier.load(forged.key) == nil)
            #expect(tier.statistics().undecryptable == 1)
        }
    }

    /// A forgery in place of an entry the tier indexed (one there at start-up is deleted by the scan).
    @Test func rekeyWithoutAMigrationDeletesAndCountsPlaintextFiles() async throws {
        try await withTemporaryFolder { dir in
            let tier = try await openTier(dir, codec: DiskTierSealingTests.codec("k1"))
            await tier.waitUntilIndexed()
            #expect(await tier.store(forged))
            try forge(forged, in: dir)
            #expect(await tier.store(makeEntry("raw:genuine")))
            #expect(await tier.rekey() == RekeyReport(rekeyed: 0, current: 1, undecryptable: 1))
            #expect(tier.statistics().undecryptable == 1)
            #expect(filesOnDisk(dir).count == 1)
            #expect(!FileManager.default.fileExists(atPath: entryPath(dir, forged.key)))
            #expect(await tier.load(forged.key) == nil)
        }
    }

    @Test func aMigrationReadsPlaintextFilesAndRekeySealsThem() async throws {
        try await withTemporaryFolder { dir in
            try forge(forged, in: dir)
            let migrating = try await openTier(dir, codec: DiskTierSealingTests.codec("k1", migrate: true))
            await migrating.waitUntilIndexed()
            #expect(await migrating.load(forged.key) == forged)
            #expect(await migrating.rekey() == RekeyReport(rekeyed: 1, current: 0, undecryptable: 0))
            let bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: entryPath(dir, forged.key))))
            #expect(try EntryFormat.decodeHeader(bytes).isSealed)
            // Sealed now: an instance without the migration serves it.
            let strict = try await openTier(dir, codec: DiskTierSealingTests.codec("k1"))
            await strict.waitUntilIndexed()
            #expect(await strict.load(forged.key) == forged)
            #expect(strict.statistics().undecryptable == 0)
        }
    }

    @Test func withoutAKeyRingPlaintextIsReadAsBefore() async throws {
        try await withTemporaryFolder { dir in
            try forge(forged, in: dir)
            let tier = try await openTier(dir)
            await tier.waitUntilIndexed()
            #expect(await tier.load(forged.key) == forged)
            #expect(tier.statistics().undecryptable == 0)
        }
    }
}
