import Foundation
import HTTPRouting
import Logging
@testable import Settings
import Testing
import TestSupport
import UnifiedCache

@testable import UnicacheApp

/// W3C Trace Context: a request's `traceparent` (and `tracestate`) reaches the upstream fetch it causes as the same
/// trace with a new span; without a valid one the fetch starts the request's own trace; the request's log line
/// carries the trace id beside the request id. A real upstream HTTP server (TestUpstream) receives the headers.
@Suite(.timeLimit(.minutes(10)), .serialized) struct TraceContextTests {
    static let incoming = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

    static func requestLine(_ id: String, in collector: LineCollector) throws -> [String: Any]? {
        try RequestCorrelationTests.objects(collector).first { line in
            line["message"] as? String == "request" && line["requestId"] as? String == id
        }
    }

    @Test func aValidTraceparentIsContinuedWithANewSpanAndItsStateUnchanged() async throws {
        let collector = LineCollector()
        try await withService(LiveService.start(logger: RequestCorrelationTests.jsonLogger(collector))) { live in
            let answer = try await live.request(
                .GET, "/v1/users/t/activities",
                headers: [("traceparent", Self.incoming), ("tracestate", "congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"),
                          ("X-Request-ID", "with-trace")])
            await live.stop()

            #expect(answer.status == 200)
            let headers = try #require(live.upstream.lastHeaders("/users/t/activities"))
            let sent = try #require(headers["traceparent"].first.flatMap(TraceParent.init(parsing:)))
            #expect(headers["traceparent"].count == 1)
            #expect(sent.traceID == "4bf92f3577b34da6a3ce929d0e0e4736")
            #expect(sent.parentID != "00f067aa0ba902b7")
            #expect(sent.flags == 1)
            #expect(headers["tracestate"] == ["congo=t61rcWkgMzE,rojo=00f067aa0ba902b7"])

            let line = try #require(try Self.requestLine("with-trace", in: collector))
            #expect(line["traceId"] as? String == "4bf92f3577b34da6a3ce929d0e0e4736")
            #expect((line["metadata"] as? [String: Any])?["traceId"] as? String == "4bf92f3577b34da6a3ce929d0e0e4736")
        }
    }

    @Test func withoutATraceparentTheFetchStartsTheTraceTheLogLineNames() async throws {
        let collector = LineCollector()
        try await withService(LiveService.start(logger: RequestCorrelationTests.jsonLogger(collector))) { live in
            let fresh = try await live.request(.GET, "/v1/users/u/activities", headers: [("tracestate", "congo=lost")])
            // An invalid traceparent (an all-zero trace id) counts as absent, and its tracestate is not passed on.
            let invalid = try await live.request(
                .GET, "/v1/users/v/activities",
                headers: [("traceparent", "00-00000000000000000000000000000000-00f067aa0ba902b7-01"), ("tracestate", "congo=x")])
            await live.stop()

            for (answer, path) in [(fresh, "/users/u/activities"), (invalid, "/users/v/activities")] {
                #expect(answer.status == 200)
                let headers = try #require(live.upstream.lastHeaders(path))
                let sent = try #require(headers["traceparent"].first.flatMap(TraceParent.init(parsing:)))
                #expect(sent.traceID != "00000000000000000000000000000000")
                #expect(headers["tracestate"].isEmpty)
                let id = try #require(answer.header("X-Request-ID"))
                let line = try #require(try Self.requestLine(id, in: collector))
                #expect(line["traceId"] as? String == sent.traceID)
            }
            let traces = [fresh, invalid].compactMap { $0.header("X-Request-ID") }.map(TraceParent.traceID(forRequestID:))
            #expect(Set(traces).count == 2)
        }
    }
}
