import Foundation
import TestSupport
import Testing
import UnifiedCache

@testable import DiskTier

/// CONTRACT §8.9 "Files" for what an earlier version left: files it wrote 644 and folders it made 755 are
/// tightened to 600 and 700 by the start-up scan; a data dir that existed before the service is left as it is (it
/// may be a mount point, or the operator's). The umask's part is `DataFolderModeTests`, in a child process.
@Suite(.timeLimit(.minutes(10))) struct DiskTierFileModeTests {
    func mode(_ path: String) throws -> Int {
        try #require((FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue)
    }

    func setMode(_ mode: Int, _ path: String) throws {
        try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
    }

    @Test func filesAndFoldersOfAnEarlierVersionAreTightenedAtStartUp() async throws {
        try await withTemporaryFolder { dir in
            try setMode(0o755, dir)
            let writer = try await openTier(dir)
            await writer.waitUntilIndexed()
            #expect(await writer.store(makeEntry("raw:a")))
            let file = entryPath(dir, "raw:a")
            let second = (file as NSString).deletingLastPathComponent
            let first = (second as NSString).deletingLastPathComponent
            #expect(try mode(file) == 0o600)
            #expect(try mode(second) == 0o700)
            #expect(try mode(first) == 0o700)
            // As an earlier version left them.
            try setMode(0o644, file)
            try setMode(0o755, second)
            try setMode(0o755, first)

            let restarted = try await openTier(dir)
            await restarted.waitUntilIndexed()
            #expect(try mode(file) == 0o600)
            #expect(try mode(second) == 0o700)
            #expect(try mode(first) == 0o700)
            #expect(try mode(dir) == 0o755)
            #expect(await restarted.load("raw:a") == makeEntry("raw:a"))
        }
    }

    @Test func aDataDirTheTierMakesIs700() async throws {
        try await withTemporaryFolder { dir in
            let made = dir + "/new/data"
            let tier = try await openTier(made)
            await tier.waitUntilIndexed()
            #expect(try mode(made) == 0o700)
            #expect(try mode(dir + "/new") == 0o700)
        }
    }
}
