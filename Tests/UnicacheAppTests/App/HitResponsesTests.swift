import Foundation
import HTTPRouting
import Testing
import UnifiedCache

@testable import UnicacheApp

/// The fast path's per-second memory of warm targets (HitResponses): reused only while nothing changes.
@Suite struct HitResponsesTests {
    let target = "/v1/users/alice/subscription"

    @Test func hitsInOneSecondShareOneRenderedAnswerAndTheNextSecondRendersAgain() async throws {
        let h = AppHarness()
        _ = try await h.send(.get, target)
        h.clock.advance(by: 5)
        let first = try await h.send(.get, target)
        let second = try await h.send(.get, target)
        #expect(first.header("X-Cache") == "HIT" && first.header("Age") == "5")
        let slot = ObjectIdentifier(try #require(first.wireForm))
        #expect(second.wireForm.map(ObjectIdentifier.init) == slot)
        #expect(second == first)

        h.clock.advance(by: 1)
        let later = try await h.send(.get, target)
        #expect(later.header("Age") == "6")
        #expect(later.header("Cache-Control") == "private, max-age=294")
        #expect(later.wireForm.map(ObjectIdentifier.init) != slot)
    }

    @Test func aDeletedEntryIsNotAnsweredFromMemoryWithinTheSameSecond() async throws {
        let h = AppHarness()
        _ = try await h.send(.get, target)
        let hit = try await h.send(.get, target)
        #expect(hit.header("X-Cache") == "HIT")
        let deleted = try await h.send(.delete, "/v1/cache/subscription:alice", admin: true)
        #expect(deleted.status == 204)
        let next = try await h.send(.get, target)
        #expect(next.header("X-Cache") == "MISS")
        #expect(h.fetcher.count("subscription:alice") == 2)
    }

    @Test func aRefreshedEntryInTheSameSecondIsServedWithItsNewBody() async throws {
        let h = AppHarness()
        _ = try await h.send(.get, target)
        let hit = try await h.send(.get, target)
        let refreshed = try await h.send(.get, target + "?refresh=true")
        #expect(refreshed.header("X-Cache") == "REFRESH")
        let after = try await h.send(.get, target)
        #expect(after.header("X-Cache") == "HIT")
        #expect(after.header("ETag") == refreshed.header("ETag"))
        #expect(after.header("ETag") != hit.header("ETag"))
        #expect(after.body == refreshed.body)
    }

    @Test func conditionalRequestsAreRenderedPerRequest() async throws {
        let h = AppHarness()
        let miss = try await h.send(.get, target)
        let etag = try #require(miss.header("ETag"))
        _ = try await h.send(.get, target)
        let notModified = try await h.send(.get, target, headers: [("If-None-Match", etag)])
        #expect(notModified.status == 304 && notModified.body.isEmpty)
        #expect(notModified.wireForm == nil)
    }
}
