import Foundation
import TestSupport
import Testing

@testable import DiskTier

/// One running service per data dir: the second to ask for the folder's lock is refused with the holder's process id,
/// until the first lets it go.
@Suite(.timeLimit(.minutes(1))) struct DataDirectoryLockTests {
    @Test func aSecondLockIsRefusedNamingTheHolderUntilTheFirstIsReleased() throws {
        try withTemporaryFolder { dir in
            let first = try DataDirectoryLock.acquire(dir)
            #expect(throws: DiskTierError.dataDirectoryInUse(path: dir, holder: Int(getpid()))) {
                _ = try DataDirectoryLock.acquire(dir)
            }
            first.release()
            first.release()  // idempotent
            let second = try DataDirectoryLock.acquire(dir)
            let path = "\(dir)/\(DataDirectoryLock.fileName)"
            let mode = (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue
            #expect(mode == 0o600)
            #expect(try String(contentsOfFile: path, encoding: .utf8) == "\(getpid())\n")
            second.release()
        }
    }

    @Test func aMissingFolderIsMadeFirst() throws {
        try withTemporaryFolder { dir in
            let lock = try DataDirectoryLock.acquire("\(dir)/a/b")
            var isFolder: ObjCBool = false
            #expect(FileManager.default.fileExists(atPath: "\(dir)/a/b", isDirectory: &isFolder) && isFolder.boolValue)
            lock.release()
        }
    }

    /// A FIFO under the lock's name (put there by whoever else writes in the folder) is refused at once: opening it
    /// waited for a writer, and start-up hung with no line.
    @Test func aFIFOUnderTheLocksNameIsRefusedAtOnce() throws {
        try withTemporaryFolder { dir in
            #expect(mkfifo("\(dir)/\(DataDirectoryLock.fileName)", 0o600) == 0)
            #expect {
                _ = try DataDirectoryLock.acquire(dir)
            } throws: { error in
                guard case .dataDirectoryUnusable(let path, let reason)? = error as? DiskTierError else { return false }
                return path == dir && reason.contains("not a regular file")
            }
        }
    }

    @Test func aFileWhereTheFolderShouldBeIsUnusable() throws {
        try withTemporaryFolder { dir in
            #expect(FileManager.default.createFile(atPath: "\(dir)/file", contents: Data()))
            #expect {
                _ = try DataDirectoryLock.acquire("\(dir)/file")
            } throws: { error in
                guard case .dataDirectoryUnusable(let path, _)? = error as? DiskTierError else { return false }
                return path == "\(dir)/file"
            }
        }
    }
}
