import AsyncHTTPClient
import DiskTier
import Foundation
import RedisTestSupport
@testable import Settings
import TestSupport
import Testing

@testable import UnicacheApp

/// CONTRACT §8.9 "Files": every file the service writes under `--data-dir` is mode 600 and every folder it makes
/// 700, whatever the umask. The real executable runs under `umask 0` set by a shell in the child process (the
/// umask is process-wide: this test process keeps its own); with a shared tier, so that the fleet's log position
/// is written in the data folder too.
@Suite(.serialized, .timeLimit(.minutes(5)), .executableBuilt)
struct DataFolderModeTests {
    static let token = "mode-token"

    /// Every file and folder under `root` (itself included) with its permission bits.
    static func modes(under root: String) throws -> (files: [String: Int], folders: [String: Int]) {
        var files: [String: Int] = [:]
        var folders: [String: Int] = [:]
        func mode(_ path: String) throws -> (Int, Bool) {
            let attributes = try FileManager.default.attributesOfItem(atPath: path)
            let permissions = (attributes[.posixPermissions] as? NSNumber)?.intValue ?? -1
            return (permissions, attributes[.type] as? FileAttributeType == .typeDirectory)
        }
        folders[root] = try mode(root).0
        let walker = try #require(FileManager.default.enumerator(atPath: root))
        while let relative = walker.nextObject() as? String {
            let path = "\(root)/\(relative)"
            let (permissions, isFolder) = try mode(path)
            if isFolder { folders[path] = permissions } else { files[path] = permissions }
        }
        return (files, folders)
    }

    @Test func everyFileIs600AndEveryFolder700UnderUmaskZero() async throws {
        let redis = try await RedisServerProcess.start()
        let folder = try TemporaryFolder("at-rest"), parent = folder.path
        defer { folder.remove() }
        // Made by the service, with a folder between.
        let dataDir = parent + "/made/data"
        let arguments = [
            "--data-dir", dataDir, "--disk-limit", "64MiB", "--admin-token", Self.token,
            "--redis", "redis://127.0.0.1:\(redis.port)", "--redis-prefix", "modes:", "--redis-timeout", "2s",
        ]
        // `$0` is the executable, `$@` its arguments.
        var service = try await ExecutableTests.Service.start(arguments, launcher: ["/bin/sh", "-c", #"umask 0; exec "$0" "$@""#])
        let port = try #require(service.port, "no start-up line in: \(service.log)")
        try await FleetCrashTests.waitUntilInStep(HTTPClient.shared, port: port)
        for key in ["doc:a", "doc:b", "doc:c"] { #expect(try await FullDiskTests.put(port: port, key: key, token: Self.token) == 201) }
        #expect(await service.stop() == 0)
        await redis.stop()

        let (files, folders) = try Self.modes(under: dataDir)
        // Three entries, the folder's lock and the fleet's log position (and, when the process exited while a
        // checkpoint was being written, that checkpoint's temporary file: a file the service wrote, so checked too).
        let checkpoint = dataDir + "/" + UnicacheService.checkpointFileName
        let lock = dataDir + "/" + DataDirectoryLock.fileName
        #expect(files.keys.filter { $0.hasPrefix(dataDir + "/") && !$0.hasPrefix(checkpoint) && $0 != lock }.count == 3, "\(files.keys.sorted())")
        #expect(files.keys.contains(checkpoint) && files.keys.contains(lock))
        for (path, mode) in files { #expect(mode == 0o600, "\(path): \(String(mode, radix: 8))") }
        #expect(folders.count >= 4)
        for (path, mode) in folders { #expect(mode == 0o700, "\(path): \(String(mode, radix: 8))") }
        let made = try Self.modes(under: parent + "/made").folders[parent + "/made"]
        #expect(made == 0o700)
    }
}
