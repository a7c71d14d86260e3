import Foundation
import OpenAPISpec
@testable import Settings
import Testing

@testable import UnicacheApp

/// `?tz=` takes the spec's `TimeZoneName` list (IANA's zones and links), which the runtime's time zone database must
/// resolve: a tzdata or toolchain update that drops a name, or adds a canonical one the list lacks, shows here.
@Suite(.timeLimit(.minutes(1)))
struct TimeZoneListTests {
    @Test func theSpecsTimeZonesAreIANAsAndTheRuntimeResolvesEach() throws {
        let named = TimeZoneNames.listed(in: OpenAPIDocument.yaml)
        #expect(Set(named) == TimeZoneNames.accepted)
        #expect(named == named.sorted() && Set(named).count == named.count)
        #expect(named.count > 590)
        #expect(named.filter { TimeZone(identifier: $0) == nil } == [], "in the spec, unknown to the runtime")
        let canonical = Set(TimeZone.knownTimeZoneIdentifiers).union(["UTC", "Etc/UTC"])
        #expect(canonical.subtracting(named).sorted() == [], "known to the runtime, missing from the spec")
        // IANA's current names beside the older ones ICU's own list keeps (CLDR's), both ways round.
        for name in ["Asia/Kolkata", "Asia/Calcutta", "Europe/Kyiv", "Europe/Kiev", "Asia/Ho_Chi_Minh", "Asia/Saigon",
                     "America/Argentina/Buenos_Aires", "America/Buenos_Aires", "US/Eastern", "Etc/GMT+5"] {
            #expect(named.contains(name), "\(name)")
        }
    }

    /// A name of the list is taken as spelled there; ICU would also take offsets and other spellings.
    @Test(arguments: [("Asia/Kolkata", 200), ("Asia/Calcutta", 200), ("Asia/Saigon", 200), ("US/Eastern", 200),
                      ("asia/kolkata", 400), ("GMT+5", 400), ("Mars/Base", 400), ("SystemV/EST5", 400)])
    func aRequestTakesTheListedNames(name: String, status: Int) async throws {
        let h = AppHarness()
        let response = try await h.send(.get, "/v1/users/alice/progress/answered-today?tz=\(name)")
        #expect(response.status == status)
    }
}
