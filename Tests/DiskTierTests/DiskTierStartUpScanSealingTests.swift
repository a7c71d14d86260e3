import Foundation
import TestSupport
import Testing
import UnifiedCache

@testable import DiskTier

/// CONTRACT §9.2 at start-up: a sealed file found under another entry's name (moved or copied there) does not open,
/// so the index scan counts it undecryptable and deletes it, exactly as a read would; a plaintext one stays corrupt.
@Suite(.timeLimit(.minutes(10))) struct DiskTierStartUpScanSealingTests {
    /// Writes `a` and `b` with `codec`, then puts a copy of `a`'s file under `b`'s name.
    func writeMovedFile(in dir: String, codec: EntryCodec) async throws {
        let writer = try await openTier(dir, codec: codec)
        await writer.waitUntilIndexed()
        #expect(await writer.store(makeEntry("raw:a")))
        #expect(await writer.store(makeEntry("raw:b")))
        try FileManager.default.removeItem(atPath: entryPath(dir, "raw:b"))
        try FileManager.default.copyItem(atPath: entryPath(dir, "raw:a"), toPath: entryPath(dir, "raw:b"))
    }

    @Test func aMovedSealedFileCountsUndecryptableAtStartUp() async throws {
        try await withTemporaryFolder { dir in
            try await writeMovedFile(in: dir, codec: DiskTierSealingTests.codec("k1"))
            let tier = try await openTier(dir, codec: DiskTierSealingTests.codec("k1"))
            await tier.waitUntilIndexed()
            #expect(tier.statistics().undecryptable == 1)
            #expect(tier.statistics().corrupt == 0)
            #expect(tier.statistics().entries == 1)
            #expect(!FileManager.default.fileExists(atPath: entryPath(dir, "raw:b")))
            #expect(await tier.load("raw:a") == makeEntry("raw:a"))
        }
    }

    @Test func aMovedPlaintextFileStaysCorruptAtStartUp() async throws {
        try await withTemporaryFolder { dir in
            try await writeMovedFile(in: dir, codec: EntryCodec())
            let tier = try await openTier(dir)
            await tier.waitUntilIndexed()
            #expect(tier.statistics().corrupt == 1)
            #expect(tier.statistics().undecryptable == 0)
            #expect(!FileManager.default.fileExists(atPath: entryPath(dir, "raw:b")))
        }
    }
}
