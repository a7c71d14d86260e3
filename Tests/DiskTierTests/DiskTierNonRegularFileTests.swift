import Foundation
import TestSupport
import Testing
import UnifiedCache

@testable import DiskTier

/// Nothing in the data folder can hang the tier: a FIFO, a link or a folder where an entry file should be is
/// never followed or waited on; it is a corrupt entry (deleted where possible, counted, never served).
@Suite(.timeLimit(.minutes(1)))
struct DiskTierNonRegularFileTests {
    /// A tier that stored `k`, whose entry file `replace` then swaps for something else (given the file's path).
    private func tierWithEntryReplaced(in dir: String, by replace: (String) throws -> Void) async throws -> DiskTier {
        let tier = try await openTier(dir)
        await tier.waitUntilIndexed()
        #expect(await tier.store(makeEntry("k")))
        let path = entryPath(dir, "k")
        try FileManager.default.removeItem(atPath: path)
        try replace(path)
        return tier
    }

    @Test func aFIFOInPlaceOfAnEntryIsACorruptEntryNotAHang() async throws {
        try await withTemporaryFolder { dir in
            let tier = try await tierWithEntryReplaced(in: dir) { #expect(mkfifo($0, 0o644) == 0) }
            let path = entryPath(dir, "k")
            #expect(await tier.load("k") == nil)  // open(2) on a FIFO without a writer would block here
            #expect(tier.statistics().corrupt == 1)
            #expect(!FileManager.default.fileExists(atPath: path))
        }
    }

    @Test func aFIFOFoundAtStartUpDoesNotStopTheIndexRebuild() async throws {
        try await withTemporaryFolder { dir in
            let first = try await openTier(dir)
            // Its own start-up scan done first: still running (slow under TSan), it found the FIFO below, deleted it
            // and counted it as its own, and the tier under test then had nothing to count.
            await first.waitUntilIndexed()
            #expect(await first.store(makeEntry("kept")))
            #expect(await first.store(makeEntry("fifo")))
            let path = entryPath(dir, "fifo")
            try FileManager.default.removeItem(atPath: path)
            #expect(mkfifo(path, 0o644) == 0)

            let tier = try await openTier(dir)
            await tier.waitUntilIndexed()  // the scan used to block in open(2) for ever
            #expect(tier.statistics().corrupt == 1)
            #expect(await tier.load("kept") != nil)
            #expect(await tier.load("fifo") == nil)
        }
    }

    @Test func aSymbolicLinkInPlaceOfAnEntryIsNotFollowed() async throws {
        try await withTemporaryFolder { dir in
            try await withTemporaryFolder { elsewhere in
                // A valid entry file for the same key, reachable only through the link.
                let other = try await openTier(elsewhere)
                #expect(await other.store(makeEntry("k", body: Array("from elsewhere".utf8))))
                let tier = try await tierWithEntryReplaced(in: dir) {
                    try FileManager.default.createSymbolicLink(atPath: $0, withDestinationPath: entryPath(elsewhere, "k"))
                }
                #expect(await tier.load("k") == nil)
                #expect(tier.statistics().corrupt == 1)
                #expect(FileManager.default.fileExists(atPath: entryPath(elsewhere, "k")))  // the target is left alone
            }
        }
    }

    @Test func aFolderInPlaceOfAnEntryIsNeverServed() async throws {
        try await withTemporaryFolder { dir in
            let tier = try await tierWithEntryReplaced(in: dir) {
                try FileManager.default.createDirectory(atPath: $0, withIntermediateDirectories: false)
            }
            #expect(await tier.load("k") == nil)
            #expect(await tier.load("k") == nil)
            #expect(tier.statistics().corrupt >= 1)
        }
    }
}
