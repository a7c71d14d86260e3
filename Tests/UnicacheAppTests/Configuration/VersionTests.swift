import Foundation
import Settings
import Testing
import UnicacheApp

/// CONTRACT §11.5: `unicache --version`, and a changelog whose newest entry is the version the binary says.
@Suite(.timeLimit(.minutes(1)))
struct VersionTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    @Test(.executableBuilt)
    func versionPrintsTheRelease() async throws {
        let result = try await BuiltExecutable.run(["--version"])
        #expect(result.status == 0)
        #expect(result.standardOutput.trimmingCharacters(in: .whitespacesAndNewlines) == UnicacheVersion.current)
    }

    @Test func theChangelogsNewestEntryIsThisVersionAndTheLicenseIsApache() throws {
        let changelog = try String(contentsOf: Self.root.appendingPathComponent("CHANGELOG.md"), encoding: .utf8)
        let newest = changelog.split(separator: "\n").first { $0.hasPrefix("## ") }
        #expect(newest?.hasPrefix("## \(UnicacheVersion.current)") == true, "\(newest ?? "no entry")")
        let license = try String(contentsOf: Self.root.appendingPathComponent("LICENSE"), encoding: .utf8)
        #expect(license.contains("Apache License") && license.contains("Version 2.0, January 2004"))
    }
}
