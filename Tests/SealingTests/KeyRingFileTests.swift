import Foundation
import TestSupport
import Testing

@testable import Sealing

/// The key file itself: missing, unreadable, readable by group or others (refused like an OpenSSH private key),
/// not a regular file.
@Suite(.timeLimit(.minutes(10))) struct KeyRingFileTests {
    static let key = Data((0..<32).map { UInt8($0 * 3) }).base64EncodedString()

    @discardableResult
    func withKeyFile<T>(_ text: String, mode: Int, _ body: (String) throws -> T) throws -> T {
        try withTemporaryFolder("keyring") { folder in
            let path = folder + "/keys"
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
            return try body(path)
        }
    }

    @Test func aPrivateFileLoads() throws {
        let ring = try withKeyFile("main:\(Self.key)\n", mode: 0o600) { try KeyRing.load(path: $0) }
        #expect(ring.primary.id == "main")
        let readOnly = try withKeyFile("main:\(Self.key)\n", mode: 0o400) { try KeyRing.load(path: $0) }
        #expect(readOnly.keys.count == 1)
    }

    @Test(arguments: [0o644, 0o640, 0o604, 0o660, 0o602])
    func aFileOthersMayUseIsRefused(_ mode: Int) throws {
        try withKeyFile("main:\(Self.key)\n", mode: mode) { path in
            #expect(throws: KeyRingError.tooOpen(path: path, mode: String(mode, radix: 8))) { try KeyRing.load(path: path) }
        }
    }

    @Test func aMissingFileOrAFolderIsRefused() throws {
        let missing = "/nonexistent-\(UUID().uuidString)/keys"
        #expect(throws: KeyRingError.unreadable(path: missing, reason: "No such file or directory")) {
            try KeyRing.load(path: missing)
        }
        try withTemporaryFolder("ring-folder") { folder in
            #expect(throws: KeyRingError.notRegularFile(path: folder)) { try KeyRing.load(path: folder) }
        }
    }

    @Test func aMalformedFileNamesTheLineNotTheKey() throws {
        try withKeyFile("# keys\nmain:\(Self.key)\nmain:\(Self.key)\n", mode: 0o600) { path in
            #expect(throws: KeyRingError.duplicateID(line: 3, id: "main")) { try KeyRing.load(path: path) }
        }
    }
}
