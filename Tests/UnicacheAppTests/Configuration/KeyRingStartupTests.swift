import Foundation
import TestSupport
import Testing

/// CONTRACT §9.4: every bad key ring stops start-up with one line naming the flag, before listening, and never
/// shows a byte of a key.
@Suite(.serialized, .timeLimit(.minutes(10)), .executableBuilt)
struct KeyRingStartupTests {
    static let key = Data((0..<32).map { UInt8($0 &* 7) }).base64EncodedString()

    enum Ring: String, CaseIterable {
        case missing, groupReadable, othersReadable, malformed, shortKey, notBase64, duplicateID, empty
    }

    /// The ring's file in a fresh folder (the folder is returned for removal).
    func write(_ ring: Ring) throws -> (folder: TemporaryFolder, path: String) {
        let folder = try TemporaryFolder("ring")
        let path = folder.file("keys")
        let (text, mode): (String, Int) =
            switch ring {
            case .missing: ("", 0)
            case .groupReadable: ("main:\(Self.key)\n", 0o640)
            case .othersReadable: ("main:\(Self.key)\n", 0o604)
            case .malformed: ("\(Self.key)\n", 0o600)
            case .shortKey: ("main:\(Self.key.prefix(24))\n", 0o600)
            case .notBase64: ("main:\(Self.key.dropLast(2))**\n", 0o600)
            case .duplicateID: ("main:\(Self.key)\nmain:\(Self.key)\n", 0o600)
            case .empty: ("# no key yet\n", 0o600)
            }
        if ring != .missing {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            try FileManager.default.setAttributes([.posixPermissions: mode], ofItemAtPath: path)
        }
        return (folder, path)
    }

    @Test(arguments: Ring.allCases)
    func aBadRingStopsStartUpWithOneLine(_ ring: Ring) async throws {
        let (folder, path) = try write(ring)
        defer { folder.remove() }
        let result = try await BuiltExecutable.run(["--encryption-keys", path, "--port", "0", "--data-dir", folder.file("data")])
        #expect(result.status == 64)
        #expect(result.standardError.hasPrefix("error: --encryption-keys: "), "\(result.standardError)")
        #expect(result.standardError.filter { $0 == "\n" }.count == 1)
        #expect(!result.standardError.contains(Self.key.prefix(16)))
        #expect(!result.standardOutput.contains("listening on"))
    }

    @Test func theVariableIsNamedWhenThePathCameFromIt() async throws {
        let (folder, path) = try write(.groupReadable)
        defer { folder.remove() }
        let result = try await BuiltExecutable.run(
            ["--port", "0", "--data-dir", folder.file("data")], environment: ["UNICACHE_ENCRYPTION_KEYS": path])
        #expect(result.status == 64)
        #expect(result.standardError.hasPrefix("error: UNICACHE_ENCRYPTION_KEYS (--encryption-keys): the key file"))
        #expect(result.standardError.contains("640"))
    }
}
