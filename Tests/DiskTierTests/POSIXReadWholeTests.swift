import Foundation
import Synchronization
import TestSupport
import Testing

@testable import DiskTier

/// `POSIXFileSystem.readWhole`, the disk hit's read on the HTTP thread (`fstat` and `pread` of a file it keeps
/// open): the whole file or nil, never a part of one, nothing but a regular file ever reads as one, and never a file
/// the path no longer names.
@Suite(.timeLimit(.minutes(1)))
struct POSIXReadWholeTests {
    private let fileSystem = POSIXFileSystem()

    private func write(_ bytes: [UInt8], to path: String) throws {
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    private func bytes(_ count: Int) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) } }

    @Test(arguments: [0, 1, 1_200, 16_383, 16_384, 16_385, 3 * 16_384 + 5])
    func aFileWithinTheLimitIsReadWhole(size: Int) throws {
        try withTemporaryFolder { dir in
            let path = "\(dir)/f"
            try write(bytes(size), to: path)
            // The first read opens the file, the next ones read it from the descriptor kept open.
            for _ in 0..<3 { #expect(fileSystem.readWhole(path, upTo: 1 << 20) == bytes(size)) }
        }
    }

    @Test(arguments: [10, 16_384, 16_484])
    func aFileLongerThanTheLimitIsNil(limit: Int) throws {
        try withTemporaryFolder { dir in
            let path = "\(dir)/f"
            try write(bytes(limit + 1), to: path)
            #expect(fileSystem.readWhole(path, upTo: limit) == nil)
            try write(bytes(limit), to: path)
            #expect(fileSystem.readWhole(path, upTo: limit) == bytes(limit))
            // Grown in place: the kept descriptor reads it as longer than the limit.
            try write(bytes(limit + 1), to: path)
            #expect(fileSystem.readWhole(path, upTo: limit) == nil)
        }
    }

    @Test func aMissingFileAFolderALinkAndAFIFOAreNotAnEntrysBytes() throws {
        try withTemporaryFolder { dir in
            #expect(fileSystem.readWhole("\(dir)/missing", upTo: 1 << 20) == nil)
            try FileManager.default.createDirectory(atPath: "\(dir)/folder", withIntermediateDirectories: false)
            #expect(fileSystem.readWhole("\(dir)/folder", upTo: 1 << 20) == nil)
            try write(bytes(100), to: "\(dir)/target")
            try FileManager.default.createSymbolicLink(atPath: "\(dir)/link", withDestinationPath: "\(dir)/target")
            #expect(fileSystem.readWhole("\(dir)/link", upTo: 1 << 20) == nil)
            // A FIFO without a writer opens at once (O_NONBLOCK) and reads as empty: bytes no entry verifies.
            #expect(mkfifo("\(dir)/fifo", 0o644) == 0)
            #expect(fileSystem.readWhole("\(dir)/fifo", upTo: 1 << 20) ?? [] == [])
        }
    }

    @Test func aFileReadIsKeptOpenAndReadAgainFromItsDescriptor() throws {
        try withTemporaryFolder { dir in
            let path = "\(dir)/f"
            try write(bytes(900), to: path)
            #expect(fileSystem.readWhole(path, upTo: 1 << 20) == bytes(900))
            #expect(fileSystem.openFiles.count == 1)
            // Written in place (the same file): the kept descriptor reads the new bytes, shorter or longer, within
            // one read's 16 KiB or past it.
            try write(bytes(700), to: path)
            #expect(fileSystem.readWhole(path, upTo: 1 << 20) == bytes(700))
            try write(bytes(701), to: path)
            #expect(fileSystem.readWhole(path, upTo: 1 << 20) == bytes(701))
            try write(bytes(20_000), to: path)
            #expect(fileSystem.readWhole(path, upTo: 1 << 20) == bytes(20_000))
            try write(bytes(700), to: path)
            #expect(fileSystem.readWhole(path, upTo: 1 << 20) == bytes(700))
            #expect(fileSystem.openFiles.count == 1)
        }
    }

    @Test func theTiersRenameAndUnlinkLetGoOfTheFileKeptAtThePath() throws {
        try withTemporaryFolder { dir in
            let path = "\(dir)/f"
            try write(bytes(900), to: path)
            #expect(fileSystem.readWhole(path, upTo: 1 << 20) == bytes(900))
            try write(Array(bytes(500).reversed()), to: "\(dir)/t")
            try fileSystem.rename("\(dir)/t", to: path)
            #expect(fileSystem.openFiles.count == 0)
            #expect(fileSystem.readWhole(path, upTo: 1 << 20) == Array(bytes(500).reversed()))
            try fileSystem.unlink(path)
            #expect(fileSystem.openFiles.count == 0)
            #expect(fileSystem.readWhole(path, upTo: 1 << 20) == nil)
        }
    }

    @Test func aFileRenamedOverOrDeletedBySomeoneElseIsLetGoByItsSixteenthRead() throws {
        try withTemporaryFolder { dir in
            let path = "\(dir)/f"
            try write(bytes(900), to: path)
            #expect(fileSystem.readWhole(path, upTo: 1 << 20) == bytes(900))
            // Another process replaces it (a new file renamed over the path, not through this file system).
            try write(bytes(300), to: "\(dir)/t")
            #expect(rename("\(dir)/t", path) == 0)
            let reads = (0..<16).map { _ in fileSystem.readWhole(path, upTo: 1 << 20) }
            #expect(reads.allSatisfy { $0 == bytes(900) || $0 == bytes(300) })
            #expect(reads.last == bytes(300))
            #expect(fileSystem.readWhole(path, upTo: 1 << 20) == bytes(300))
            #expect(fileSystem.openFiles.count == 1)
            #expect(unlink(path) == 0)
            let afterUnlink = (0..<16).map { _ in fileSystem.readWhole(path, upTo: 1 << 20) }
            #expect(afterUnlink.last == .some(nil))
            #expect(fileSystem.openFiles.count == 0)
        }
    }

    /// A disk hit finds its kept file by the entry's key: its path is made only to open it. The tier's rename onto the
    /// path and its unlink let go of the file kept by the key, as of one kept by its path.
    @Test func aFileKeptByItsKeyIsReadWithoutItsPathAndLetGoByItsPathsChanges() throws {
        try withTemporaryFolder { dir in
            let path = "\(dir)/f"
            let made = Atomic<Int>(0)
            func read() -> [UInt8]? {
                fileSystem.readWhole(
                    entry: "k", hash: 1, in: dir, at: { made.add(1, ordering: .relaxed); return path }, upTo: 1 << 20)
            }
            try write(bytes(900), to: path)
            for _ in 0..<3 { #expect(read() == bytes(900)) }
            #expect(made.load(ordering: .relaxed) == 1)
            #expect(fileSystem.openFiles.count == 1)
            try write(bytes(700), to: "\(dir)/t")
            try fileSystem.rename("\(dir)/t", to: path)
            #expect(fileSystem.openFiles.count == 0)
            #expect(read() == bytes(700))
            #expect(made.load(ordering: .relaxed) == 2)
            try fileSystem.unlink(path)
            #expect(fileSystem.openFiles.count == 0)
            #expect(read() == nil)
        }
    }

    /// The same key in two tiers' folders names two files; a path kept by its own name and then by a key is kept once.
    @Test func aKeyIsAFileOfItsFolderAndAPathIsKeptOnce() throws {
        try withTemporaryFolder { dir in
            try FileManager.default.createDirectory(atPath: "\(dir)/a", withIntermediateDirectories: false)
            try FileManager.default.createDirectory(atPath: "\(dir)/b", withIntermediateDirectories: false)
            try write(bytes(100), to: "\(dir)/a/f")
            try write(bytes(200), to: "\(dir)/b/f")
            for _ in 0..<2 {
                for (folder, size) in [("a", 100), ("b", 200)] {
                    let read = fileSystem.readWhole(
                        entry: "k", hash: 1, in: "\(dir)/\(folder)", at: { "\(dir)/\(folder)/f" }, upTo: 1 << 20)
                    #expect(read == bytes(size))
                }
            }
            #expect(fileSystem.openFiles.count == 2)
            #expect(fileSystem.readWhole("\(dir)/a/f", upTo: 1 << 20) == bytes(100))
            #expect(fileSystem.openFiles.count == 2)
            try fileSystem.unlink("\(dir)/a/f")
            try fileSystem.unlink("\(dir)/b/f")
            #expect(fileSystem.openFiles.count == 0)
        }
    }

    @Test func aFileOpenedBeforeARenameOntoItsPathIsNotKept() throws {
        try withTemporaryFolder { dir in
            let files = OpenFiles(capacity: 4)
            let opened = files.generation
            files.drop("\(dir)/other")
            files.keep(OpenFile(-1), as: .init(path: "\(dir)/f"), at: "\(dir)/f", openedIn: opened)
            #expect(files.count == 0)
            files.keep(OpenFile(-1), as: .init(path: "\(dir)/f"), at: "\(dir)/f", openedIn: files.generation)
            #expect(files.count == 1)
        }
    }

    @Test func pastItsCapacityTheOldestKeptFileGoes() throws {
        let files = OpenFiles(capacity: 3)
        for round in 0..<50 {
            for name in ["a", "b", "c", "d"] {
                files.keep(OpenFile(-1), as: .init(path: name), at: name, openedIn: files.generation)
                if round % 7 == 0 { files.drop("b") }
            }
            #expect(files.count <= 3)
        }
        for name in ["e", "f", "g", "h"] { files.keep(OpenFile(-1), as: .init(path: name), at: name, openedIn: files.generation) }
        #expect(files[.init(path: "e")] == nil)
        #expect(["f", "g", "h"].allSatisfy { files[.init(path: $0)] != nil })
        #expect(files.count == 3)
    }

    @Test func withNoCapacityNothingIsKept() throws {
        try withTemporaryFolder { dir in
            let fileSystem = POSIXFileSystem(keepingOpen: 0)
            try write(bytes(900), to: "\(dir)/f")
            #expect(fileSystem.readWhole("\(dir)/f", upTo: 1 << 20) == bytes(900))
            #expect(fileSystem.openFiles.count == 0)
        }
    }

    /// One writer renames version after version onto a path while two readers read it: a read that starts after a
    /// rename returned never gives an older version (a file kept open before it is let go, or never kept). Each on a
    /// thread of its own: as iterations of `concurrentPerform`, the writers of both arguments, running side by side,
    /// took the two threads of a 2-core machine's pool and waited for reads from readers that never got one.
    @Test(arguments: [false, true]) func readersNeverSeeAVersionOlderThanTheLastRename(byKey: Bool) async throws {
        try await withTemporaryFolder { dir in
            let path = "\(dir)/f"
            let fileSystem = fileSystem
            @Sendable func readWhole() -> [UInt8]? {
                byKey
                    ? fileSystem.readWhole(entry: "k", hash: 1, in: dir, at: { path }, upTo: 1 << 20)
                    : fileSystem.readWhole(path, upTo: 1 << 20)
            }
            let versions = 2_000
            let published = Atomic<Int>(0)
            let stale = Atomic<Int>(0)
            let reads = Atomic<Int>(0)
            @Sendable func contents(_ version: Int) -> [UInt8] { withUnsafeBytes(of: version) { Array($0) } + bytes(200) }
            try write(contents(0), to: path)
            @Sendable func work(_ worker: Int) {
                if worker == 0 {
                    for version in 1...versions {
                        let temporary = "\(dir)/t\(version)"
                        try? write(contents(version), to: temporary)
                        try? fileSystem.rename(temporary, to: path)
                        published.store(version, ordering: .releasing)
                        // Every 100 versions the writer waits for two more reads (unless a reader stopped), so the reads
                        // overlap the renames however the threads run (under the full suite the writer once ran them all
                        // first).
                        if version % 100 == 0, version < versions {
                            let before = reads.load(ordering: .relaxed)
                            while reads.load(ordering: .relaxed) < before + 2, stale.load(ordering: .relaxed) == 0 { sched_yield() }
                        }
                    }
                } else {
                    while true {
                        let floor = published.load(ordering: .acquiring)
                        guard let read = readWhole(), read.count >= 8 else {
                            stale.add(1, ordering: .relaxed)
                            break
                        }
                        let version = read.withUnsafeBytes { $0.loadUnaligned(as: Int.self) }
                        if version < floor { stale.add(1, ordering: .relaxed) }
                        reads.add(1, ordering: .relaxed)
                        if floor == versions { break }
                    }
                }
            }
            let workers = (0..<3).map { worker in ThreadTask { work(worker) } }
            for worker in workers { await worker.value }
            #expect(stale.load(ordering: .relaxed) == 0)
            #expect(reads.load(ordering: .relaxed) >= 2 * (versions / 100 - 1))
            #expect(readWhole() == contents(versions))
        }
    }
}
