import Foundation
import OpenAPISpec
@testable import Settings
import Testing

@testable import UnicacheApp

/// The spec's `TimeZoneName` list is the runtime's time zone database: a tzdata or toolchain update that adds or
/// drops a zone must show here, not as an `openapi.yaml` that names zones the service refuses (or the reverse).
@Suite(.timeLimit(.minutes(1)))
struct TimeZoneListTests {
    @Test func theSpecsTimeZonesAreTheRuntimes() throws {
        let lines = OpenAPIDocument.yaml.split(separator: "\n", omittingEmptySubsequences: false)
        let start = try #require(lines.firstIndex { $0.trimmingCharacters(in: .whitespaces) == "TimeZoneName:" })
        let list = try #require(lines[start...].firstIndex { $0.trimmingCharacters(in: .whitespaces) == "enum:" })
        var named: Set<String> = []
        for line in lines[(list + 1)...] {
            let text = line.trimmingCharacters(in: .whitespaces)
            guard text.hasPrefix("- ") else { break }
            named.insert(String(text.dropFirst(2)))
        }
        let known = Set(TimeZone.knownTimeZoneIdentifiers).union(["UTC", "Etc/UTC"])
        #expect(named.subtracting(known).sorted() == [], "in the spec, unknown to the runtime")
        #expect(known.subtracting(named).sorted() == [], "known to the runtime, missing from the spec")
        #expect(named.count > 300)
    }
}
