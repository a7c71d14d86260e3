import DiskTier
import Foundation
import HTTPRouting
@testable import Settings
import TestSupport
import Testing
import UnifiedCache

@testable import UnicacheApp

@Suite(.timeLimit(.minutes(10))) struct RawCacheTests {
    @Test func putGetHeadDelete() async throws {
        let h = AppHarness()
        let created = try await h.send(
            .put, "/v1/cache/k1", headers: [("Content-Type", "text/plain")], body: "hello", admin: true)
        #expect(created.status == 201)
        let etag = try #require(created.header("ETag"))
        #expect(try await h.send(.put, "/v1/cache/k1", body: "hello again", admin: true).status == 200)

        h.clock.advance(by: 5)
        let got = try await h.send(.get, "/v1/cache/k1", admin: true)
        #expect(got.status == 200)
        #expect(got.text == "hello again")
        #expect(got.header("Content-Type") == "application/octet-stream")
        #expect(got.header("Age") == "5")
        #expect(got.header("Expires")?.hasSuffix("GMT") == true)
        #expect(got.header("ETag") != etag)

        #expect(try await h.send(.delete, "/v1/cache/k1", admin: true).status == 204)
        #expect(try await h.send(.delete, "/v1/cache/k1", admin: true).status == 404)
        #expect(try await h.send(.get, "/v1/cache/k1", admin: true).status == 404)
    }

    @Test func ttlFromQueryOrMaxAgeAndNeverStale() async throws {
        let h = AppHarness()
        _ = try await h.send(.put, "/v1/cache/short?ttl=10s", body: "x", admin: true)
        _ = try await h.send(.put, "/v1/cache/age", headers: [("Cache-Control", "max-age=20")], body: "y", admin: true)
        h.clock.advance(by: 11)
        #expect(try await h.send(.get, "/v1/cache/short", admin: true).status == 404)
        #expect(try await h.send(.get, "/v1/cache/age", admin: true).status == 200)
        #expect(try await h.send(.put, "/v1/cache/bad?ttl=soon", body: "z", admin: true).status == 400)
    }

    /// `max-age` is RFC 9111's delta-seconds: digits only, and a number too large to hold is the largest TTL (its
    /// section 1.2.2), not an error.
    @Test func maxAgeIsDigitsAndTooLargeIsTheLongestTTL() async throws {
        let h = AppHarness()
        for (index, value) in ["99999999999999999999999999", "9223372036854775808", "315360000000"].enumerated() {
            let put = try await h.send(.put, "/v1/cache/long\(index)", headers: [("Cache-Control", "max-age=\(value)")], body: "x", admin: true)
            #expect(put.status == 201, "\(value)")
        }
        // `?ttl=` alike: a number too large to hold, in any unit, is the longest TTL.
        let tooLarge = ["99999999999999999999999999s", "106751991167301d", "9223372036854775808ms"]
        for (index, value) in tooLarge.enumerated() {
            let put = try await h.send(.put, "/v1/cache/long\(index + 3)?ttl=\(value)", body: "x", admin: true)
            #expect(put.status == 201, "\(value)")
        }
        h.clock.advance(by: 99 * 365 * 86400)
        for index in 0..<6 {
            #expect(try await h.send(.get, "/v1/cache/long\(index)", admin: true).status == 200)
        }
        for value in ["+5", "-5", "0", "5s", " ", "0x10", "1e3"] {
            let put = try await h.send(.put, "/v1/cache/bad", headers: [("Cache-Control", "max-age=\(value)")], body: "x", admin: true)
            #expect(put.status == 400, "\(value)")
        }
        #expect(try await h.send(.get, "/v1/cache/bad", admin: true).status == 404)
    }

    /// A body in a content coding would be served back without its `Content-Encoding`: 415 with
    /// `Accept-Encoding: identity`, and nothing stored; `identity` (or an empty value) is no coding.
    @Test func aBodyInAContentCodingIsRefused() async throws {
        let h = AppHarness()
        for coding in ["gzip", "br", "identity, gzip", "GZIP"] {
            let put = try await h.send(.put, "/v1/cache/coded", headers: [("Content-Encoding", coding)], body: "x", admin: true)
            #expect(put.status == 415, "\(coding)")
            #expect(put.header("Accept-Encoding") == "identity", "\(coding)")
            #expect(put.json["type"] as? String == Problem.typeURI("unsupported-content-coding"), "\(coding)")
        }
        #expect(try await h.send(.get, "/v1/cache/coded", admin: true).status == 404)
        for coding in ["identity", "", " Identity "] {
            let put = try await h.send(.put, "/v1/cache/plain", headers: [("Content-Encoding", coding)], body: "x", admin: true)
            #expect(put.status == 201 || put.status == 200, "\(coding)")
        }
    }

    /// RFC 9111 section 5.2: a recipient accepts a directive's argument in quoted-string form too, so
    /// `max-age="60"` is a TTL of 60 s; quotes around nothing, or only one of them, are no number.
    @Test func maxAgeInQuotedFormIsItsNumber() async throws {
        let h = AppHarness()
        let put = try await h.send(.put, "/v1/cache/quoted", headers: [("Cache-Control", #"max-age="60""#)], body: "x", admin: true)
        #expect(put.status == 201)
        h.clock.advance(by: 59)
        #expect(try await h.send(.get, "/v1/cache/quoted", admin: true).status == 200)
        h.clock.advance(by: 2)
        #expect(try await h.send(.get, "/v1/cache/quoted", admin: true).status == 404)
        for value in [#""""#, #"""#, #""60"#, #"60""#, #""6"0""#] {
            let bad = try await h.send(.put, "/v1/cache/bad", headers: [("Cache-Control", "max-age=\(value)")], body: "x", admin: true)
            #expect(bad.status == 400, "\(value)")
        }
    }

    /// A raw entry past its TTL is absent to every part of the raw API: not served, not listed, and its DELETE is 404
    /// (the copy still goes).
    @Test func anExpiredEntryIsAbsentToListingAndDelete() async throws {
        let h = AppHarness()
        _ = try await h.send(.put, "/v1/cache/gone?ttl=10s", body: "x", admin: true)
        _ = try await h.send(.put, "/v1/cache/kept?ttl=1h", body: "y", admin: true)
        h.clock.advance(by: 11)
        #expect(try await h.send(.get, "/v1/cache/gone", admin: true).status == 404)
        let listing = try await h.send(.get, "/v1/cache?prefix=", admin: true)
        let keys = (listing.json["entries"] as? [[String: Any]])?.compactMap { $0["key"] as? String }
        #expect(keys == ["kept"])
        #expect(try await h.send(.delete, "/v1/cache/gone", admin: true).status == 404)
        #expect(try await h.send(.delete, "/v1/cache/kept", admin: true).status == 204)
    }

    /// A remembered "not found" is listed and counted by a prefix delete, so a `DELETE` of its key removes something:
    /// 204, then 404; the next read asks the upstream again. `GET` still has no value to show (404).
    @Test func aRememberedNotFoundIsDeletedWith204() async throws {
        let h = AppHarness()
        h.fetcher.set(.fail(.notFound))
        #expect(try await h.send(.get, "/v1/users/alice/activities/a1/streams").status == 404)
        let listing = try await h.send(.get, "/v1/cache?prefix=streams:", admin: true)
        #expect((listing.json["entries"] as? [[String: Any]])?.compactMap { $0["key"] as? String } == ["streams:alice:a1"])
        #expect(try await h.send(.get, "/v1/cache/streams:alice:a1", admin: true).status == 404)
        #expect(try await h.send(.delete, "/v1/cache/streams:alice:a1", admin: true).status == 204)
        #expect(try await h.send(.delete, "/v1/cache/streams:alice:a1", admin: true).status == 404)
        h.fetcher.set(.answer)
        #expect(try await h.send(.get, "/v1/users/alice/activities/a1/streams").status == 200)
        // Past its minute, a remembered "not found" is absent to DELETE, as an expired value is.
        h.fetcher.set(.fail(.notFound))
        _ = try await h.send(.get, "/v1/users/alice/activities/a2/streams")
        h.clock.advance(by: 61)
        #expect(try await h.send(.delete, "/v1/cache/streams:alice:a2", admin: true).status == 404)
    }

    /// An empty `Content-Type` is as none: the body is served as `application/octet-stream`.
    @Test func anEmptyContentTypeIsStoredAsBytes() async throws {
        let h = AppHarness()
        _ = try await h.send(.put, "/v1/cache/ct", headers: [("Content-Type", "")], body: "x", admin: true)
        #expect(try await h.send(.get, "/v1/cache/ct", admin: true).header("Content-Type") == "application/octet-stream")
    }

    /// The `Content-Type` is served back with the body, so it must be a media type: `not a type` was stored and
    /// served. Parameters are kept as given.
    @Test(arguments: ["not a type", "text", "text/", "/plain", "text/plain/x", "te xt/plain", "text/pla(in", "text/plain;\u{7f}"])
    func aContentTypeThatIsNoMediaTypeIsRefused(contentType: String) async throws {
        let h = AppHarness()
        let response = try await h.send(.put, "/v1/cache/ct", headers: [("Content-Type", contentType)], body: "x", admin: true)
        #expect(response.status == 400)
        #expect(response.json["parameter"] as? String == "Content-Type")
        #expect(try await h.send(.get, "/v1/cache/ct", admin: true).status == 404)
    }

    @Test(arguments: ["text/plain; charset=utf-8", "application/vnd.api+json", "multipart/x;boundary=\"a b\"", "a/b ;q=1", "*/*"])
    func aMediaTypeIsStoredAsGiven(contentType: String) async throws {
        let h = AppHarness()
        #expect(try await h.send(.put, "/v1/cache/ct", headers: [("Content-Type", contentType)], body: "x", admin: true).status == 201)
        #expect(try await h.send(.get, "/v1/cache/ct", admin: true).header("Content-Type") == contentType)
    }

    @Test func listAndInvalidateByPrefix() async throws {
        let h = AppHarness()
        _ = try await h.send(.get, "/v1/users/alice/subscription")
        _ = try await h.send(.put, "/v1/cache/raw:1", body: "a", admin: true)
        _ = try await h.send(.put, "/v1/cache/raw:2", body: "bb", admin: true)
        let listing = try await h.send(.get, "/v1/cache?prefix=raw:", admin: true)
        let entries = try #require(listing.json["entries"] as? [[String: Any]])
        #expect(entries.count == 2)
        #expect(entries.allSatisfy { $0["namespace"] as? String == "raw" && $0["tier"] as? String == "memory" })
        let all = try await h.send(.get, "/v1/cache", admin: true)
        let readThrough = (all.json["entries"] as? [[String: Any]])?.first { $0["key"] as? String == "subscription:alice" }
        #expect(readThrough?["namespace"] as? String == "subscription")

        #expect(try await h.send(.delete, "/v1/cache?prefix=raw:", admin: true).json["invalidated"] as? Int == 2)
        #expect(try await h.send(.delete, "/v1/cache", admin: true).status == 400)
        #expect(try await h.send(.delete, "/v1/cache?all=true", admin: true).json["invalidated"] as? Int == 1)
    }

    /// `DELETE /v1/cache?prefix=raw:&prefix=` invalidated `raw:` only; given twice, a parameter of the raw API is
    /// refused and nothing is touched.
    @Test(arguments: [
        (HTTPMethod.delete, "/v1/cache?prefix=raw:&prefix=", "prefix"), (.delete, "/v1/cache?all=false&all=true", "all"),
        (.get, "/v1/cache?limit=1&limit=2", "limit"), (.put, "/v1/cache/raw:1?ttl=1m&ttl=1h", "ttl"),
    ])
    func aParameterGivenTwiceIs400(method: HTTPMethod, target: String, parameter: String) async throws {
        let h = AppHarness()
        _ = try await h.send(.put, "/v1/cache/raw:1", body: "a", admin: true)
        let response = try await h.send(method, target, body: "b", admin: true)
        #expect(response.status == 400)
        #expect(response.json["parameter"] as? String == parameter)
        #expect(try await h.send(.get, "/v1/cache/raw:1", admin: true).text == "a")
    }

    @Test(arguments: ["/v1/cache/..", "/v1/cache/a%2Fb", "/v1/cache/a%00b", "/v1/cache/sp%20ace"])
    func badKeysAre400(target: String) async throws {
        let h = AppHarness()
        #expect(try await h.send(.put, target, body: "x", admin: true).status == 400)
        #expect(try await h.send(.get, target, admin: true).status == 400)
    }

    @Test func oversizedKeyIs400() async throws {
        let h = AppHarness()
        let key = String(repeating: "k", count: 513)
        #expect(try await h.send(.put, "/v1/cache/\(key)", body: "x", admin: true).status == 400)
        #expect(try await h.send(.put, "/v1/cache/\(key.dropLast())", body: "x", admin: true).status == 201)
    }
}

/// A raw PUT larger than the disk tier's whole budget: 507, its detail saying so (it said "the disk tier could not
/// write the entry (the disk tier could not write the entry)" and to retry once the disk had room), and the tier
/// still healthy.
@Suite(.timeLimit(.minutes(1))) struct RawCacheBudgetTests {
    @Test func aValueLargerThanTheDiskBudgetIsRefusedSayingSo() async throws {
        try await withTemporaryFolder("raw-budget") { folder in
            let tier = try await DiskTier.open(
                DiskTierConfiguration(directory: folder, limitBytes: 4096), clock: ManualWallClock(AppHarness.start),
                ticker: ManualClock())
            let h = AppHarness(secondTier: tier)
            let refused = try await h.send(.put, "/v1/cache/big", body: String(repeating: "a", count: 5000), admin: true)
            let detail = refused.json["detail"] as? String ?? ""
            #expect(refused.status == 507)
            #expect(detail.contains("the entry is larger than the disk tier's whole budget of 4096 bytes"), "\(detail)")
            #expect(detail.contains("raise --disk-limit"), "\(detail)")
            #expect(tier.health() == nil)
            #expect(try await h.send(.put, "/v1/cache/small", body: "a", admin: true).status == 201)
        }
    }

    /// Memory alone dropped such a value at once: the PUT answered 201 and the next GET 404.
    @Test func aValueLargerThanTheMemoryBudgetWithNoOtherTierIsRefusedAndChangesNothing() async throws {
        let h = AppHarness(memory: MemoryTierConfiguration(maxBytes: 4096))
        #expect(try await h.send(.put, "/v1/cache/k", body: "kept", admin: true).status == 201)
        for key in ["k", "new"] {
            let refused = try await h.send(.put, "/v1/cache/\(key)", body: String(repeating: "a", count: 5000), admin: true)
            let detail = refused.json["detail"] as? String ?? ""
            #expect(refused.status == 507)
            #expect(detail.contains("more than its whole budget of 4096 bytes"), "\(detail)")
            #expect(detail.contains("raise --memory-limit"), "\(detail)")
        }
        #expect(try await h.send(.get, "/v1/cache/k", admin: true).text == "kept")
        #expect(try await h.send(.get, "/v1/cache/new", admin: true).status == 404)
    }
}
