import Foundation
import Settings
import Testing
import UnicacheApp

/// CONTRACT §11.6: `unicache --help` lists the flags of the default subcommand, `serve` (the README, docs and every
/// start-up error send users there); the subcommands' own help and `--version` stay as they were.
@Suite(.timeLimit(.minutes(2)), .executableBuilt)
struct RootHelpTests {
    /// The flags a help text lists (`--memory-limit`, …).
    static func flags(_ help: String) -> Set<String> {
        Set(help.split(whereSeparator: { !$0.isLetter && !$0.isNumber && $0 != "-" }).map(String.init)
            .filter { $0.hasPrefix("--") && $0.count > 2 })
    }

    @Test(arguments: [["--help"], ["-h"], ["help"]])
    func theRootHelpListsServesFlags(_ arguments: [String]) async throws {
        let root = try await BuiltExecutable.run(arguments)
        let serve = try await BuiltExecutable.run(["serve", "--help"])
        #expect(root.status == 0 && serve.status == 0)
        #expect(root.standardError.isEmpty)
        let help = root.standardOutput
        #expect(help.contains("--memory-limit <size>"))
        #expect(help.contains("UNICACHE_MEMORY_LIMIT"))
        #expect(help.contains("USAGE: unicache [serve]"))
        #expect(Self.flags(serve.standardOutput).count > 40)
        #expect(Self.flags(serve.standardOutput).isSubset(of: Self.flags(help)))
        for subcommand in ["serve (default)", "healthcheck", "top"] {
            #expect(help.contains("  \(subcommand)"), "\(subcommand)")
        }
        #expect(help.contains("--version"))
    }

    @Test func subcommandsKeepTheirOwnHelpAndTheVersionStays() async throws {
        let serve = try await BuiltExecutable.run(["serve", "--help"])
        #expect(serve.standardOutput.contains("USAGE: unicache serve"))
        let top = try await BuiltExecutable.run(["top", "--help"])
        #expect(top.status == 0 && top.standardOutput.contains("--interval") && !top.standardOutput.contains("--memory-limit"))
        let healthcheck = try await BuiltExecutable.run(["help", "healthcheck"])
        #expect(healthcheck.status == 0 && healthcheck.standardOutput.contains("USAGE: unicache healthcheck"))
        let version = try await BuiltExecutable.run(["--version"])
        #expect(version.status == 0 && version.standardOutput == UnicacheVersion.current + "\n")
    }
}
