import Foundation
@testable import Settings
import Testing

/// A `UNICACHE_` variable the service does not read (`UNICACHE_MEMORY_LIMT=1GiB`) left its setting at the default
/// without a word; start-up now warns naming it, and the variable a typo or two away.
@Suite struct IgnoredVariableTests {
    @Test func anUnreadVariableIsNamedWithTheNearestOneReadNeverItsValue() {
        let environment = [
            "UNICACHE_MEMORY_LIMT": "1GiB", "UNICACHE_ADMIN_TOKN": "s3cret", "UNICACHE_BIN": "/x",
            "UNICACHE_PORT": "8080", "UNICACHE_TOP_URL": "http://h:1", "UNICACHE_REDIS_PASSWORD_FILE": "/run/p",
            "UNICACHE_UPSTREAM_HEALTH": "http://up", "HOME": "/root", "unicache_port": "1",
        ]
        #expect(ServeOptions.ignoredVariables(in: environment) == [
            IgnoredVariable(name: "UNICACHE_ADMIN_TOKN", suggestion: "UNICACHE_ADMIN_TOKEN"),
            IgnoredVariable(name: "UNICACHE_BIN", suggestion: nil),
            IgnoredVariable(name: "UNICACHE_MEMORY_LIMT", suggestion: "UNICACHE_MEMORY_LIMIT"),
        ])
        #expect(!"\(ServeOptions.ignoredVariables(in: environment))".contains("s3cret"))
    }

    /// The variables read are those of `serve`'s flags: every one of docs/configuration.md's tables is among them, so none
    /// a user sets as documented is called ignored.
    @Test func everyDocumentedVariableIsRead() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
        let text = try String(contentsOf: root.appendingPathComponent("docs/configuration.md"), encoding: .utf8)
        // The tables' rows, one per flag (the prose names a misspelt variable as an example).
        let rows = text.split(separator: "\n").filter { $0.hasPrefix("| `--") }.joined(separator: "\n")
        let documented = Set(rows.split { !($0.isUppercase || $0.isNumber || $0 == "_") }.filter { $0.hasPrefix("UNICACHE_") })
            .map(String.init).filter { !$0.hasSuffix("_") && !$0.hasPrefix("UNICACHE_UPSTREAM_") }
        #expect(documented.count >= 30)
        #expect(ServeOptions.ignoredVariables(in: Dictionary(uniqueKeysWithValues: documented.map { ($0, "") })) == [])
    }

    @Test(arguments: [("", "", 0), ("A", "", 1), ("LIMT", "LIMIT", 1), ("TOKN", "TOKEN", 1), ("AB", "BA", 2), ("BIN", "TTL", 3)])
    func editDistance(a: String, b: String, distance: Int) {
        #expect(ServeOptions.editDistance(a, b) == distance)
        #expect(ServeOptions.editDistance(b, a) == distance)
    }
}
