import Foundation
import Testing

/// CONTRACT §8.9: with a key ring, a TLS key or an admin token configured the process makes no core dump (core size
/// limit 0, not dumpable); without one it leaves both as it found them. The service runs as `nobody` with an
/// unlimited core size, so that both facts show: a process that is not dumpable has its /proc files owned by root.
@Suite(.serialized, .timeLimit(.minutes(2)), .executableBuilt)
struct CoreDumpTests {
    static let launcher = [
        "/usr/bin/prlimit", "--core=unlimited", "/usr/bin/setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
    ]

    /// The core size limit line of /proc/PID/limits and the owner of /proc/PID/status.
    func coreFacts(_ pid: Int32) throws -> (limit: String, owner: Int) {
        let limits = try String(contentsOfFile: "/proc/\(pid)/limits", encoding: .utf8)
        let line = limits.split(separator: "\n").first { $0.hasPrefix("Max core file size") } ?? ""
        let fields = line.dropFirst("Max core file size".count).split(separator: " ")
        let owner = try FileManager.default.attributesOfItem(atPath: "/proc/\(pid)/status")[.ownerAccountID] as? Int
        return (fields.prefix(2).joined(separator: " "), owner ?? -1)
    }

    /// A copy of the executable that `nobody` may run: the build folder may lie below folders only root may enter
    /// (a CI clone under a mode-700 temporary folder). `install` writes it in a process of its own: written from
    /// this one, a child that another test forks meanwhile could inherit the open file and make the exec fail with
    /// "Text file busy" (ETXTBSY).
    func executableForNobody() throws -> (folder: URL, executable: URL) {
        let built = try #require(BuiltExecutable.url)
        let folder = URL(fileURLWithPath: "/tmp").appendingPathComponent("unicache-core-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: false)
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder.path)
        let copy = folder.appendingPathComponent("unicache")
        let install = Process()
        install.executableURL = URL(fileURLWithPath: "/usr/bin/install")
        install.arguments = ["-m", "0755", built.path, copy.path]
        try install.run()
        install.waitUntilExit()
        try #require(install.terminationStatus == 0, "install could not copy \(built.path)")
        return (folder, copy)
    }

    @Test func secretsMakeTheProcessNotDumpable() async throws {
        let (folder, executable) = try executableForNobody()
        defer { try? FileManager.default.removeItem(at: folder) }
        var plain = try await ExecutableTests.Service.start(["--auth", "none"], launcher: Self.launcher, executable: executable)
        #expect(plain.port != nil, "\(plain.log)")
        let before = try coreFacts(plain.process.processIdentifier)
        // ThreadSanitizer's runtime lowers the soft limit itself (to 1): the hard limit still tells.
        #expect(before.limit == (BuiltExecutable.underThreadSanitizer ? "1 unlimited" : "unlimited unlimited"))
        #expect(before.owner == 65534)
        #expect(await plain.stop() == 0)

        var holding = try await ExecutableTests.Service.start(
            ["--auth", "none", "--admin-token", "s3cret"], launcher: Self.launcher, executable: executable)
        #expect(holding.port != nil, "\(holding.log)")
        let after = try coreFacts(holding.process.processIdentifier)
        #expect(after.limit == "0 0")
        #expect(after.owner == 0)
        #expect(await holding.stop() == 0)
    }
}
