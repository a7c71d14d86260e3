import Foundation
import TestSupport
import Testing
import UnifiedCache

@testable import DiskTier

@Suite(.timeLimit(.minutes(10))) struct DiskTierPersistenceTests {
    @Test func entriesSurviveARestartIdentical() async throws {
        try await withTemporaryFolder { dir in
            let entries = (0..<60).map { i in
                makeEntry(
                    "raw:key\(i)", body: (0..<(i * 37)).map { UInt8(truncatingIfNeeded: $0 &* i) },
                    user: i.isMultiple(of: 3) ? "user\(i)" : nil, stale: Double(i))
            }
            let first = try await openTier(dir)
            for entry in entries { #expect(await first.store(entry)) }

            let second = try await openTier(dir)
            await second.waitUntilIndexed()
            #expect(second.statistics().entries == entries.count)
            #expect(second.statistics().bytes == first.statistics().bytes)
            for entry in entries { #expect(await second.load(entry.key) == entry) }
            #expect(await second.list(prefix: "raw:key1", limit: 100).count == 11)
        }
    }

    /// Reads on the caller's thread keep a file's recency: the file read that way is not the one evicted.
    @Test func aFileReadNowIsNotTheNextVictim() async throws {
        try await withTemporaryFolder { dir in
            let body = Array(repeating: UInt8(7), count: 1000)
            let probe = try await openTier(dir)
            #expect(await probe.store(makeEntry("size", body: body)))
            let fileSize = probe.statistics().bytes
            let tier = try await openTier(dir + "/lru", limit: fileSize * 3)
            await tier.waitUntilIndexed()
            for key in ["a", "b", "c"] { #expect(await tier.store(makeEntry(key, body: body))) }
            #expect(tier.loadNow("a") == makeEntry("a", body: body))
            #expect(await tier.store(makeEntry("d", body: body)))
            #expect(await tier.load("a") != nil)
            #expect(await tier.load("b") == nil)
            #expect(tier.loadNow("missing") == nil && tier.loadNow("b") == nil)
        }
    }

    /// A file past its servable life is no read now (`load` deletes it).
    @Test func anExpiredFileIsNoReadNow() async throws {
        try await withTemporaryFolder { dir in
            let clock = ManualWallClock(epoch)
            let tier = try await openTier(dir, clock: clock)
            #expect(await tier.store(makeEntry("k", ttl: 10)))
            #expect(tier.loadNow("k") != nil)
            clock.advance(by: 11)
            #expect(tier.loadNow("k") == nil)
        }
    }

    @Test func syncedWritesStoreAndReloadTheSame() async throws {
        try await withTemporaryFolder { dir in
            let configuration = DiskTierConfiguration(directory: dir, limitBytes: 1 << 20, syncWrites: true)
            let tier = try await DiskTier.open(configuration, clock: ManualWallClock(epoch), ticker: ManualClock(), logger: testLogger)
            #expect(await tier.store(makeEntry("synced")))
            let restarted = try await DiskTier.open(configuration, clock: ManualWallClock(epoch), ticker: ManualClock(), logger: testLogger)
            #expect(await restarted.load("synced") == makeEntry("synced"))
        }
    }

    @Test func aKeyNotYetIndexedLoadsWhileTheRebuildRuns() async throws {
        try await withTemporaryFolder { dir in
            let first = try await openTier(dir)
            for i in 0..<20 { await first.store(makeEntry("k\(i)")) }

            let fileSystem = FaultyFileSystem()
            fileSystem.holdListings()
            let second = try await openTier(dir, fileSystem: fileSystem)
            #expect(second.statistics().entries == 0)
            #expect(await second.load("k7") == makeEntry("k7"))
            #expect(await second.load("missing") == nil)
            #expect(await second.remove("k8").removed == ["k8"])
            #expect(second.statistics().entries == 1)
            fileSystem.releaseListings()
            await second.waitUntilIndexed()
            // The removed key stays removed; the loaded one is not counted twice.
            #expect(second.statistics().entries == 19)
            #expect(await second.load("k8") == nil)
            #expect(await second.list(prefix: "k", limit: 100).count == 19)
        }
    }

    @Test func changesMadeWhileTheScanRunsWinOverWhatTheScanRead() async throws {
        try await withTemporaryFolder { dir in
            let first = try await openTier(dir)
            for i in 0..<10 { await first.store(makeEntry("k\(i)")) }

            let fileSystem = FaultyFileSystem()
            // The data dir itself is listed last: by then every header has been read.
            let reached = fileSystem.holdListings(of: dir)
            let second = try await openTier(dir, fileSystem: fileSystem)
            await reached.wait(for: 1)
            #expect(await second.remove("k1").removed == ["k1"])
            #expect(await second.store(makeEntry("k2", body: [9, 9, 9])))
            #expect(await second.store(makeEntry("k2", body: [8])))
            #expect(await second.remove("k2").removed == ["k2"])
            fileSystem.releaseListings()
            await second.waitUntilIndexed()

            #expect(second.statistics().entries == 8)
            #expect(await second.list(prefix: "k", limit: 100).map(\.key) == ["k0"] + (3..<10).map { "k\($0)" })
            #expect(await second.load("k1") == nil)
            #expect(await second.load("k2") == nil)
            #expect(second.statistics().bytes == filesOnDisk(dir).reduce(0) { $0 + $1.size })
        }
    }

    @Test func startUpSweepsOtherInstancesTemporaryFiles() async throws {
        try await withTemporaryFolder { dir in
            let tier = try await openTier(dir)
            await tier.store(makeEntry("a"))
            let folder = (entryPath(dir, "a") as NSString).deletingLastPathComponent
            #expect(FileManager.default.createFile(atPath: "\(folder)/.tmp-deadbeef-1", contents: Data(count: 4096)))
            #expect(FileManager.default.createFile(atPath: "\(dir)/.tmp-deadbeef-probe", contents: Data()))

            let restarted = try await openTier(dir)
            await restarted.waitUntilIndexed()
            #expect(filesOnDisk(dir).map(\.path) == [entryPath(dir, "a")])
            #expect(await restarted.load("a") == makeEntry("a"))
        }
    }

    @Test func removalAndErasureDeleteFilesBeforeReturning() async throws {
        try await withTemporaryFolder { dir in
            let tier = try await openTier(dir)
            for user in ["alice", "bob"] {
                for kind in ["subscription", "activities"] {
                    await tier.store(makeEntry("\(kind):\(user)", namespace: kind, user: user))
                }
            }
            #expect(await tier.remove("subscription:bob") == SecondTierRemoval(removed: ["subscription:bob"]))
            #expect(await tier.remove("subscription:bob") == SecondTierRemoval())
            #expect(!FileManager.default.fileExists(atPath: entryPath(dir, "subscription:bob")))

            let erased = await tier.removeAll(in: KeyScope(kind: .user("alice")))
            #expect(erased.failure == nil)
            #expect(Set(erased.removed) == ["subscription:alice", "activities:alice"])
            #expect(filesOnDisk(dir).map(\.path) == [entryPath(dir, "activities:bob")])
            #expect(await tier.list(prefix: "", limit: 10).map(\.key) == ["activities:bob"])
            #expect(tier.statistics().entries == 1)
        }
    }

    @Test func erasureDuringTheRebuildReachesFilesNotYetIndexed() async throws {
        try await withTemporaryFolder { dir in
            let first = try await openTier(dir)
            for i in 0..<10 { await first.store(makeEntry("progress:carol:\(i)", user: "carol")) }
            let fileSystem = FaultyFileSystem()
            fileSystem.holdListings()
            let second = try await openTier(dir, fileSystem: fileSystem)
            async let erased = second.removeAll(in: KeyScope(kind: .user("carol")))
            fileSystem.releaseListings()
            #expect(await erased.removed.count == 10)
            #expect(filesOnDisk(dir).isEmpty)
        }
    }

    @Test func expiredEntriesAreSweptAndNeverLoaded() async throws {
        try await withTemporaryFolder { dir in
            let clock = ManualWallClock(epoch)
            let tier = try await openTier(dir, clock: clock)
            await tier.store(makeEntry("short", ttl: 10, stale: 5))
            await tier.store(makeEntry("long", ttl: 100))
            clock.advance(by: 12)
            #expect(await tier.load("short") != nil)  // stale but still servable: the manager decides
            #expect(await tier.sweepExpired(now: clock.now()) == 0)
            clock.advance(by: 3)
            #expect(await tier.sweepExpired(now: clock.now()) == 1)
            #expect(await tier.load("short") == nil)
            #expect(filesOnDisk(dir).map(\.path) == [entryPath(dir, "long")])
            clock.advance(by: 100)
            #expect(await tier.load("long") == nil)
            #expect(filesOnDisk(dir).isEmpty)
        }
    }
}
