import Foundation
import TestSupport
import Testing
import UnifiedCache

@testable import DiskTier

@Suite(.timeLimit(.minutes(10))) struct DiskTierFaultTests {
    @Test func diskFullDegradesStoresAndRecovers() async throws {
        try await withTemporaryFolder { dir in
            let fileSystem = FaultyFileSystem()
            let tier = try await openTier(dir, fileSystem: fileSystem)
            #expect(await tier.store(makeEntry("before")))
            #expect(tier.health() == nil)

            fileSystem.set { $0.create = ENOSPC }
            #expect(!(await tier.store(makeEntry("during"))))
            #expect(!(await tier.store(makeEntry("before", body: [1, 2, 3]))))
            #expect(tier.statistics().writeErrors == 2)
            let reason = try #require(tier.health())
            #expect(reason.contains("No space left on device"))
            #expect(await tier.load("during") == nil)
            // A failed replacement never leaves the outdated version behind.
            #expect(await tier.load("before") == nil)
            #expect(filesOnDisk(dir).isEmpty)

            fileSystem.clearFaults()
            #expect(await tier.store(makeEntry("after")))
            #expect(tier.health() == nil)
            #expect(await tier.load("after") == makeEntry("after"))
        }
    }

    @Test func aFailedRenameLeavesNoTemporaryFile() async throws {
        try await withTemporaryFolder { dir in
            let fileSystem = FaultyFileSystem()
            let tier = try await openTier(dir, fileSystem: fileSystem)
            fileSystem.set { $0.rename = EIO }
            #expect(!(await tier.store(makeEntry("x"))))
            #expect(filesOnDisk(dir).isEmpty)
            #expect(tier.statistics().writeErrors == 1)
        }
    }

    @Test func readErrorsAreMissesThatKeepTheFile() async throws {
        try await withTemporaryFolder { dir in
            let fileSystem = FaultyFileSystem()
            let tier = try await openTier(dir, fileSystem: fileSystem)
            // The start-up scan runs in the background: once it is done, the load below is the only read that
            // meets the fault (a late scan reading "k" counted a second read error under the thread sanitizer).
            await tier.waitUntilIndexed()
            await tier.store(makeEntry("k"))
            fileSystem.set { $0.read = EIO }
            #expect(await tier.load("k") == nil)
            #expect(tier.statistics().readErrors == 1)
            #expect(tier.statistics().corrupt == 0)
            #expect(try #require(tier.health()).contains("Input/output error"))
            #expect(FileManager.default.fileExists(atPath: entryPath(dir, "k")))

            fileSystem.clearFaults()
            #expect(await tier.load("k") == makeEntry("k"))
            #expect(tier.health() == nil)
        }
    }

    @Test func aVanishedDataDirIsRecreatedOnTheNextWrite() async throws {
        try await withTemporaryFolder { parent in
            let dir = "\(parent)/data/nested"
            let tier = try await openTier(dir)
            await tier.store(makeEntry("old"))
            try FileManager.default.removeItem(atPath: "\(parent)/data")

            #expect(await tier.load("old") == nil)
            #expect(tier.statistics().entries == 0)
            #expect(await tier.store(makeEntry("new")))
            #expect(await tier.load("new") == makeEntry("new"))
            #expect(tier.health() == nil)
            #expect(tier.statistics().readErrors == 0)
        }
    }

    @Test func aReadOnlyDiskReportsUnhealthyAndNeverServesWhatItCouldNotDelete() async throws {
        try await withTemporaryFolder { dir in
            let fileSystem = FaultyFileSystem()
            let tier = try await openTier(dir, fileSystem: fileSystem)
            await tier.store(makeEntry("k"))
            fileSystem.set {
                $0.create = EROFS
                $0.unlink = EROFS
                $0.makeDirectory = EROFS
            }
            // The invalidation cannot reach the disk: it says so, and the key must still never be served.
            #expect(await tier.remove("k").failure?.contains("Read-only file system") == true)
            #expect(await tier.load("k") == nil)
            #expect(!(await tier.store(makeEntry("other"))))
            #expect(try #require(tier.health()).contains("Read-only file system"))
            await tier.probeWritable()
            #expect(tier.health() != nil)

            fileSystem.clearFaults()
            await tier.probeWritable()
            #expect(tier.health() == nil)
            #expect(await tier.remove("k") == SecondTierRemoval(removed: ["k"]))
            #expect(filesOnDisk(dir).isEmpty)
        }
    }

    /// A removal that covers files an earlier one could not delete deletes them once it can: a retried erasure is
    /// complete, and the files do not come back with a restart.
    @Test func aLaterRemovalDeletesWhatAnEarlierOneCouldNot() async throws {
        try await withTemporaryFolder { dir in
            let fileSystem = FaultyFileSystem()
            let tier = try await openTier(dir, fileSystem: fileSystem)
            for key in ["a", "b", "c"] {
                await tier.store(makeEntry("\(key):carol", user: key == "c" ? "dave" : "carol"))
            }
            fileSystem.set { $0.unlink = EROFS }
            #expect(await tier.remove("a:carol").failure?.contains("Read-only file system") == true)
            let refused = await tier.removeAll(in: KeyScope(kind: .user("carol")))
            #expect(refused.removed.isEmpty && refused.failure != nil)
            #expect(await tier.load("b:carol") == nil)

            fileSystem.clearFaults()
            let retried = await tier.removeAll(in: KeyScope(kind: .user("carol")))
            #expect(Set(retried.removed) == ["a:carol", "b:carol"] && retried.failure == nil)
            let reopened = try await openTier(dir)
            #expect(await reopened.list(prefix: "", limit: 10).map(\.key) == ["c:carol"])
        }
    }

    /// /readyz asks `checkedHealth`: the data dir as it is now, not as the last write found it, probed at most once a
    /// second on the tier's clock.
    @Test func aReadinessCheckProbesTheDataDirAtMostOnceASecond() async throws {
        try await withTemporaryFolder { dir in
            let fileSystem = FaultyFileSystem()
            let ticker = ManualClock()
            let tier = try await openTier(dir, fileSystem: fileSystem, ticker: ticker)
            #expect(await tier.checkedHealth() == nil)
            fileSystem.set {
                $0.create = EROFS
                $0.makeDirectory = EROFS
            }
            // Nothing was written since: the tier has not noticed, and a check within the second does not probe.
            #expect(tier.health() == nil)
            #expect(await tier.checkedHealth() == nil)
            ticker.advance(by: .seconds(1))
            #expect(try #require(await tier.checkedHealth()).contains("Read-only file system"))
            fileSystem.clearFaults()
            #expect(await tier.checkedHealth() != nil)
            ticker.advance(by: .seconds(1))
            #expect(await tier.checkedHealth() == nil)
        }
    }

    @Test func openingFailsWithATypedErrorWhenTheDataDirIsNotWritable() async throws {
        try await withTemporaryFolder { dir in
            let file = "\(dir)/plain-file"
            #expect(FileManager.default.createFile(atPath: file, contents: Data()))
            await #expect(throws: DiskTierError.self) { try await openTier("\(file)/data") }

            let fileSystem = FaultyFileSystem()
            fileSystem.set { $0.create = EROFS }
            do {
                _ = try await openTier("\(dir)/readonly", fileSystem: fileSystem)
                Issue.record("opened a read-only data dir")
            } catch {
                #expect(error as? DiskTierError == .dataDirectoryUnusable(
                    path: "\(dir)/readonly", reason: FileSystemError("open", code: EROFS).description))
            }
            await #expect(throws: DiskTierError.invalidLimit(0)) { try await openTier(dir, limit: 0) }
        }
    }

    @Test func startUpCreatesAMissingDataDir() async throws {
        try await withTemporaryFolder { dir in
            let tier = try await openTier("\(dir)/a/b/c")
            #expect(await tier.store(makeEntry("k")))
            #expect(FileManager.default.fileExists(atPath: entryPath("\(dir)/a/b/c", "k")))
        }
    }
}
