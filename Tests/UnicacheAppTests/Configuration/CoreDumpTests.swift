import Foundation
import Settings
import TestSupport
import Testing

@testable import UnicacheApp

/// CONTRACT §8.9, §14.6: with a secret configured (a key ring, a TLS key, an admin token, an upstream header, an
/// upstream URL's credentials…) the process makes no core dump (core size limit 0, not dumpable); without one it
/// leaves both as it found them. The service runs as `nobody` with an
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
    func executableForNobody() async throws -> (folder: TemporaryFolder, executable: URL) {
        let built = try #require(BuiltExecutable.url)
        let folder = try TemporaryFolder("unicache-core", under: URL(fileURLWithPath: "/tmp"))
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder.path)
        let copy = folder.url.appendingPathComponent("unicache")
        let install = try await ChildProcess.run(URL(fileURLWithPath: "/usr/bin/install"), ["-m", "0755", built.path, copy.path])
        if install.status != 0 { folder.remove() }
        try #require(install.status == 0, "install could not copy \(built.path)")
        return (folder, copy)
    }

    /// With each kind of secret (an admin token; an upstream header or credentials in an upstream URL, CONTRACT
    /// §14.6), the process makes no core dump; without one it leaves both limits alone.
    @Test(arguments: [
        ["--admin-token", "s3cret"],
        ["--upstream", "health=http://127.0.0.1:9", "--upstream-header", "health=X-Api-Key:s3cret"],
        ["--upstream", "health=http://user:s3cret@127.0.0.1:9"],
    ])
    func secretsMakeTheProcessNotDumpable(secret: [String]) async throws {
        let (folder, executable) = try await executableForNobody()
        defer { folder.remove() }
        var plain = try await ExecutableTests.Service.start(["--auth", "none"], launcher: Self.launcher, executable: executable)
        #expect(plain.port != nil, "\(plain.log)")
        let before = try coreFacts(plain.process.processIdentifier)
        // ThreadSanitizer's runtime lowers the soft limit itself (to 1): the hard limit still tells.
        #expect(before.limit == (BuiltExecutable.underThreadSanitizer ? "1 unlimited" : "unlimited unlimited"))
        #expect(before.owner == 65534)
        #expect(await plain.stop() == 0)

        var holding = try await ExecutableTests.Service.start(
            ["--auth", "none"] + secret, launcher: Self.launcher, executable: executable)
        #expect(holding.port != nil, "\(holding.log)")
        let after = try coreFacts(holding.process.processIdentifier)
        #expect(after.limit == "0 0")
        #expect(after.owner == 0)
        #expect(await holding.stop() == 0)
    }
}

/// Which configurations count as holding a secret: one list decides (`ProcessHardening.secrets`).
@Suite struct SecretListTests {
    func held(_ arguments: [String]) throws -> [String] {
        ProcessHardening.heldSecrets(try UnicacheConfiguration.parse(arguments: arguments, environment: [:]))
    }

    @Test func everyKindOfSecretIsNamed() throws {
        #expect(try held([]).isEmpty)
        #expect(try held(["--upstream", "health=https://up.example/api"]).isEmpty)
        #expect(try held(["--upstream", "health=https://up.example", "--upstream-header", "health=X-Key:k"]) == ["upstream header"])
        #expect(try held(["--upstream", "activities=https://u:p@up.example/api"]) == ["upstream URL credentials"])
        #expect(try held(["--upstream", "activities=https://token@up.example"]) == ["upstream URL credentials"])
        #expect(try held(["--upstream", "activities=https://up.example/a@b"]).isEmpty)
        #expect(try held(["--admin-token", "s3cret"]) == ["admin token"])
        #expect(try held(["--auth", "jwt", "--jwt-jwks", "https://u:p@id.example/jwks", "--jwt-audience", "api"])
            == ["JWKS URL credentials"])
    }
}
