import Access
import AsyncHTTPClient
import Clocks
import RedisTestSupport
import Foundation
import Logging
@testable import Settings
import TestSupport
import Testing
import UnifiedCache

@testable import UnicacheApp
@testable import UpstreamHTTP

@Suite(.timeLimit(.minutes(10))) struct HTTPUpstreamFetcherTests {
    static let logger: Logger = {
        var logger = Logger(label: "test")
        logger.logLevel = .warning
        return logger
    }()

    /// Runs `body` against a fresh test upstream and upstream client, shutting both down afterwards. The default
    /// timeout is generous: it is not under test there, and a ThreadSanitizer run on 2 cores took 9 s for one 404.
    static func withUpstream(
        timeout: Duration = .seconds(30),
        maxBodyBytes: Int = 8 << 20,
        clock: any WallClock = SystemWallClock(),
        _ body: (TestUpstream, HTTPUpstreamFetcher) async throws -> Void
    ) async throws {
        let upstream = TestUpstream()
        let port = try await upstream.start()
        try await withService(upstream) { upstream in
            try await withHTTPClient(UpstreamClient(timeout: timeout, maxBodyBytes: maxBodyBytes, clock: clock, ticker: ManualClock(), logger: Self.logger)) {
                client in
                try await body(upstream, try client.fetcher(baseURL: TestUpstream.baseURL(port: port) + "/"))
            }
        }
    }

    static func request(_ path: String, _ query: [QueryItem] = []) -> FetchRequest {
        FetchRequest(key: "k", namespace: "activities", user: "alice", path: path, query: query)
    }

    @Test func sendsThePathAndTheNormalisedQuery() async throws {
        try await Self.withUpstream { upstream, fetcher in
            let query = [QueryItem("days", "30"), QueryItem("types", "ride,run")]
            _ = try await fetcher.fetch(Self.request("/users/alice/activities", query))
            _ = try await fetcher.fetch(Self.request("/users/alice/subscription"))
            _ = try await fetcher.fetch(Self.request("/users/alice/x", [QueryItem("q", "a b&c=d+é#%")]))
            #expect(upstream.requestTargets == [
                "/users/alice/activities?days=30&types=ride,run",
                "/users/alice/subscription",
                "/users/alice/x?q=a%20b%26c%3Dd%2B%C3%A9%23%25",
            ])
            #expect(upstream.requestCount("/users/alice/activities") == 1)
        }
    }

    @Test func returnsTheBodyByteForByteWithItsContentType() async throws {
        let text = "{ \"b\" : 1,\n  \"a\": \"é\\u00e9\" ,\"z\":[ 1.50 ] }  "
        try await Self.withUpstream { upstream, fetcher in
            upstream.reply("/users/alice/profile", .json(text, headers: [("Content-Type", "application/vnd.demo+json; charset=utf-8")]))
            upstream.reply("/users/alice/plain", TestUpstream.Reply(status: 200, body: Array("{}".utf8)))
            let value = try await fetcher.fetch(Self.request("/users/alice/profile"))
            #expect(value.body == Array(text.utf8))
            #expect(value.contentType == "application/vnd.demo+json; charset=utf-8")
            #expect(value.storable)
            let plain = try await fetcher.fetch(Self.request("/users/alice/plain"))
            #expect(plain.contentType == "application/json")
            #expect(plain.body == Array("{}".utf8))
        }
    }

    /// The body is stored and served without a `Content-Encoding`, so it is asked for unencoded, and an upstream that
    /// encodes it anyway has failed (its bytes would be served as JSON); `identity` is no coding.
    @Test func aBodyInAContentCodingIsAnUpstreamFailure() async throws {
        try await Self.withUpstream { upstream, fetcher in
            let gzipped: [UInt8] = [0x1F, 0x8B, 0x08, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x03, 0x03, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00, 0x00]
            upstream.reply("/gzip", TestUpstream.Reply(status: 200, headers: [("Content-Encoding", "gzip")], body: gzipped))
            upstream.reply("/both", .json("{}", headers: [("Content-Encoding", "identity, br")]))
            upstream.reply("/identity", .json("{}", headers: [("Content-Encoding", "identity")]))
            for path in ["/gzip", "/both"] {
                await #expect(throws: FetchError.unavailable("upstream body in a content coding it was not asked for")) {
                    try await fetcher.fetch(Self.request(path))
                }
            }
            let unencoded = try await fetcher.fetch(Self.request("/identity"))
            #expect(unencoded.body == Array("{}".utf8))
            #expect(upstream.lastHeaders("/gzip")?.first(name: "Accept-Encoding") == "identity")
        }
    }

    /// The JWKS URL is asked for its document unencoded too; an encoded one is refused naming why (it was parsed as
    /// JSON and reported as holding no usable key).
    @Test func theJWKSIsAskedForUnencoded() async throws {
        let upstream = TestUpstream()
        let port = try await upstream.start()
        upstream.reply("/jwks.json", .json(#"{"keys":[]}"#))
        upstream.reply("/gzip.json", .json(#"{"keys":[]}"#, headers: [("Content-Encoding", "gzip")]))
        let base = TestUpstream.baseURL(port: port)
        try await withService(upstream) { upstream in
            try await withHTTPClient(HTTPClient(eventLoopGroupProvider: .singleton)) { client in
                let plain = HTTPJWKSSource(url: base + "/jwks.json", client: client, timeout: .seconds(30))
                let document = try await plain.read()
                #expect(document == Array(#"{"keys":[]}"#.utf8))
                #expect(upstream.lastHeaders("/jwks.json")?.first(name: "Accept-Encoding") == "identity")
                let encoded = HTTPJWKSSource(url: base + "/gzip.json", client: client, timeout: .seconds(30))
                let error = await #expect(throws: KeySetError.self) { try await encoded.read() }
                #expect("\(error.map { "\($0)" } ?? "")".contains("content coding"))
            }
        }
    }

    @Test func noStoreIsServedButNotStorable() async throws {
        try await Self.withUpstream { upstream, fetcher in
            upstream.reply("/users/alice/subscription", .noStore(#"{"status":"active"}"#))
            let value = try await fetcher.fetch(Self.request("/users/alice/subscription"))
            #expect(!value.storable)
            #expect(value.body == Array(#"{"status":"active"}"#.utf8))
        }
    }

    @Test func notFound() async throws {
        try await Self.withUpstream { upstream, fetcher in
            upstream.reply("/users/alice/profile", .notFound)
            await #expect(throws: FetchError.notFound) { try await fetcher.fetch(Self.request("/users/alice/profile")) }
        }
    }

    @Test func rateLimitedWithRetryAfter() async throws {
        let clock = ManualWallClock(Date(timeIntervalSince1970: 784_111_777))  // Sun, 06 Nov 1994 08:49:37 GMT
        try await Self.withUpstream(clock: clock) { upstream, fetcher in
            upstream.reply("/seconds", .rateLimited(retryAfter: "120"))
            upstream.reply("/date", .rateLimited(retryAfter: "Sun, 06 Nov 1994 08:51:07 GMT"))
            upstream.reply("/none", .rateLimited())
            await #expect(throws: FetchError.rateLimited(retryAfter: 120)) { try await fetcher.fetch(Self.request("/seconds")) }
            await #expect(throws: FetchError.rateLimited(retryAfter: 90)) { try await fetcher.fetch(Self.request("/date")) }
            await #expect(throws: FetchError.rateLimited(retryAfter: nil)) { try await fetcher.fetch(Self.request("/none")) }
        }
    }

    /// 204 was stored as an empty body served `200 application/json` (not JSON), 206's part as the whole: a 2xx
    /// other than 200 and 203 does not carry the resource. 203 (a transformed copy) does.
    @Test(arguments: [500, 502, 503, 302, 304, 418, 201, 202, 204, 205, 206])
    func otherStatusesAreUnavailable(status: Int) async throws {
        try await Self.withUpstream { upstream, fetcher in
            upstream.reply("/p", .json("{}", status: status, headers: [("Location", "/elsewhere")]))
            await #expect(throws: FetchError.unavailable("upstream status \(status)")) {
                try await fetcher.fetch(Self.request("/p"))
            }
        }
    }

    @Test func aNonAuthoritativeAnswerIsTheValue() async throws {
        try await Self.withUpstream { upstream, fetcher in
            upstream.reply("/p", .json(#"{"a":1}"#, status: 203))
            let value = try await fetcher.fetch(Self.request("/p"))
            #expect(value.body == Array(#"{"a":1}"#.utf8))
        }
    }

    @Test func aHangingUpstreamTimesOut() async throws {
        // 1 s: normally the request reaches the upstream, which never answers, well before the deadline.
        try await Self.withUpstream(timeout: .seconds(1)) { upstream, fetcher in
            upstream.set("/slow", .hang)
            await #expect(throws: FetchError.timeout) { try await fetcher.fetch(Self.request("/slow")) }
            // Under ThreadSanitizer (about ten times slower) the deadline can pass before the request even
            // arrives; either way the answer must be a timeout, and at most one request is sent.
            #expect(upstream.requestCount("/slow") <= 1)
        }
    }

    /// An upstream that sends its head at once, then its body a byte at a time (each within the HTTP client's read
    /// timeout), is a timeout at `--upstream-timeout` from the request, its connection closed: the client's deadline
    /// ended with the head, and the fetch (and its slot under the cap) was held for as long as the upstream liked.
    @Test(.timeLimit(.minutes(1))) func anUpstreamTricklingItsBodyTimesOutAtTheDeadline() async throws {
        try await Self.withUpstream(timeout: .seconds(1)) { upstream, fetcher in
            upstream.set("/trickle", .trickle(every: .milliseconds(100)))
            await #expect(throws: FetchError.timeout) { try await fetcher.fetch(Self.request("/trickle")) }
            await waitUntil("the trickled answer's connection is closed") { upstream.abandonedTrickles == 1 }
            #expect(upstream.requestCount("/trickle") == 1)
        }
    }

    @Test func aBodyOverTheCapIsUnavailable() async throws {
        try await Self.withUpstream(maxBodyBytes: 1024) { upstream, fetcher in
            upstream.reply("/big", .json("[" + String(repeating: "1,", count: 1024) + "1]"))
            upstream.reply("/small", .json("[1]"))
            await #expect(throws: FetchError.unavailable("upstream body too large")) {
                try await fetcher.fetch(Self.request("/big"))
            }
            let small = try await fetcher.fetch(Self.request("/small"))
            #expect(small.body == Array("[1]".utf8))
        }
    }

    @Test func connectionRefusedIsUnreachable() async throws {
        let reserved = try ReservedPort()
        defer { reserved.release() }
        let port = reserved.port
        let result: Result<FetchedValue, FetchError> = try await withHTTPClient(UpstreamClient(timeout: .seconds(2), clock: SystemWallClock(), ticker: ManualClock(), logger: Self.logger)) {
            client in
            let fetcher = try client.fetcher(baseURL: TestUpstream.baseURL(port: port))
            do throws(FetchError) { return .success(try await fetcher.fetch(Self.request("/x"))) } catch { return .failure(error) }
        }
        guard case .failure(.unreachable) = result else {
            Issue.record("expected .unreachable, got \(result)")
            return
        }
    }

    @Test func aGatedAnswerWaitsForTheTest() async throws {
        try await Self.withUpstream { upstream, fetcher in
            let latch = Latch()
            upstream.set("/held", .gated(latch, .json(#"{"ok":true}"#)))
            async let value = fetcher.fetch(Self.request("/held"))
            await upstream.waitForRequests("/held", count: 1)
            #expect(!latch.isOpen)
            latch.open()
            let released = try await value
            #expect(released.body == Array(#"{"ok":true}"#.utf8))
        }
    }

    @Test func concurrentFetchesShareThePool() async throws {
        try await Self.withUpstream { upstream, fetcher in
            try await withThrowingTaskGroup(of: FetchedValue.self) { group in
                for index in 0..<64 {
                    group.addTask { try await fetcher.fetch(Self.request("/users/u\(index % 8)/profile")) }
                }
                var count = 0
                for try await value in group {
                    #expect(!value.body.isEmpty)
                    count += 1
                }
                #expect(count == 64)
            }
            #expect(upstream.requestTargets.count == 64)
            #expect(upstream.requestCount("/users/u3/profile") == 8)
        }
    }

    /// A request's trace context and id reach the HTTP client only as values it accepts: a `tracestate` outside W3C
    /// Trace Context's grammar (`a=\u{7f}`, which the client refused, failing the fetch) is dropped while the valid
    /// `traceparent` is continued, and an id that is not visible ASCII is not sent.
    @Test func valuesTheClientWouldRefuseAreNotSent() async throws {
        try await Self.withUpstream { upstream, fetcher in
            var request = Self.request("/users/alice/subscription")
            request.traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"
            request.tracestate = "a=\u{7f}"
            request.requestID = "bad id\u{7f}"
            _ = try await fetcher.fetch(request)
            let headers = try #require(upstream.lastHeaders("/users/alice/subscription"))
            #expect(headers["traceparent"].first?.contains("-4bf92f3577b34da6a3ce929d0e0e4736-") == true)
            #expect(headers["tracestate"].isEmpty)
            #expect(headers["X-Request-ID"].isEmpty)
        }
    }

    /// A request the HTTP client refuses to send (here a service header's value, which configuration checks keep
    /// out) is the request's failure, `.invalidRequest`, in words that repeat none of its values; nothing is sent.
    @Test func aRequestTheClientRefusesIsInvalidNotUnavailable() async throws {
        let upstream = TestUpstream()
        let port = try await upstream.start()
        let error = try await withService(upstream) { _ in
            try await withHTTPClient(UpstreamClient(clock: SystemWallClock(), ticker: ManualClock(), logger: Self.logger)) { client in
                let fetcher = try client.fetcher(
                    baseURL: TestUpstream.baseURL(port: port), headers: [UpstreamHeader(name: "X-Key", value: "secret\u{7f}")])
                return await #expect(throws: FetchError.self) { try await fetcher.fetch(Self.request("/users/alice/profile")) }
            }
        }
        guard case .invalidRequest(let reason) = error else {
            Issue.record("expected .invalidRequest, got \(String(describing: error))")
            return
        }
        #expect(reason == "the HTTP client refused a header of the request")
        #expect(upstream.requestTargets.isEmpty)
    }

    /// `--upstream-header`s go with every fetch; an `Accept` among them replaces the default `application/json`
    /// (an upstream's own media type), which was sent beside it.
    @Test func configuredHeadersAreSentAndAnAcceptReplacesTheDefault() async throws {
        let upstream = TestUpstream()
        let port = try await upstream.start()
        try await withService(upstream) { upstream in
            try await withHTTPClient(UpstreamClient(clock: SystemWallClock(), ticker: ManualClock(), logger: Self.logger)) { client in
                let plain = try client.fetcher(
                    baseURL: TestUpstream.baseURL(port: port), headers: [UpstreamHeader(name: "X-Key", value: "k")])
                let own = try client.fetcher(
                    baseURL: TestUpstream.baseURL(port: port),
                    headers: [UpstreamHeader(name: "accept", value: "application/vnd.api+json")])
                _ = try await plain.fetch(Self.request("/plain"))
                _ = try await own.fetch(Self.request("/own"))
                #expect(upstream.lastHeaders("/plain")?["Accept"] == ["application/json"])
                #expect(upstream.lastHeaders("/plain")?.first(name: "X-Key") == "k")
                #expect(upstream.lastHeaders("/own")?["Accept"] == ["application/vnd.api+json"])
            }
        }
    }

    @Test(arguments: ["", "up:9000", "ftp://up", "http://", "http://up:9000?x=1", "not a url"])
    func invalidBaseURLsAreRejected(url: String) async throws {
        try await withHTTPClient(UpstreamClient(clock: SystemWallClock(), ticker: ManualClock(), logger: Self.logger)) { client in
            #expect(throws: UpstreamClient.InvalidBaseURL.self) { try client.fetcher(baseURL: url) }
        }
    }
}
