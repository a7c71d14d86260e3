import Foundation
import HTTPRouting
@testable import Settings
import TLSTestSupport
import TestSupport
import Testing
import UnifiedCache
@testable import UnicacheApp

/// A client cannot hurt an upstream's circuit: only the upstream's own failures count toward it. A value the HTTP
/// client would refuse never reaches it, and a request the client refuses anyway fails alone. Over a raw socket
/// (the test's own HTTP client refuses such headers too), on a gate clock that never moves: an opened circuit would
/// stay open.
@Suite(.serialized, .timeLimit(.minutes(2))) struct ClientFaultTests {
    static let traceparent = "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01"

    /// The status line and body of a raw request's answer (`Connection: close`).
    static func raw(_ live: LiveService, _ target: String, headers: String) async throws -> (status: String, body: String) {
        let bytes = try await HTTPSTestClient.plainExchange(
            "GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n\(headers)Connection: close\r\n\r\n", port: live.port)
        let text = String(decoding: bytes, as: UTF8.self)
        let parts = text.components(separatedBy: "\r\n\r\n")
        return (parts[0].components(separatedBy: "\r\n")[0], parts.dropFirst().joined(separator: "\r\n\r\n"))
    }

    /// `upstream` of `/stats`, with the subscription domain's circuit.
    static func upstreamStats(_ live: LiveService) async throws -> (fetches: Int?, failures: Int?, circuit: String?) {
        let answer = try await live.request(.GET, "/stats")
        let json = try #require(try JSONSerialization.jsonObject(with: Data(answer.body.utf8)) as? [String: Any])
        let upstream = try #require(json["upstream"] as? [String: Any])
        let domain = (upstream["domains"] as? [String: Any])?["subscription"] as? [String: Any]
        return (upstream["fetches"] as? Int, upstream["failures"] as? Int, domain?["circuit"] as? String)
    }

    /// Five forced refreshes with a valid `traceparent` and `tracestate: a=\x7f` each answered 502 (the HTTP client
    /// refused the header), opened the subscription domain's circuit, and every other user got 502 "circuit is
    /// open". Now the invalid `tracestate` is dropped: each refresh reaches the upstream with the trace continued,
    /// and so does the next user's request.
    @Test func fiveRequestsWithAnInvalidTracestateReachTheUpstreamAndLeaveTheCircuitClosed() async throws {
        try await withService(LiveService.start(gateClock: ManualClock())) { live in
            var answers: [(status: String, body: String)] = []
            for _ in 0..<5 {
                answers.append(try await Self.raw(
                    live, "/v1/users/x/subscription?refresh=true",
                    headers: "traceparent: \(Self.traceparent)\r\ntracestate: a=\u{7f}\r\n"))
            }
            let sent = live.upstream.lastHeaders("/users/x/subscription")
            let other = try await live.request(.GET, "/v1/users/y/subscription")
            let stats = try await Self.upstreamStats(live)
            await live.stop()

            #expect(answers.map(\.status) == Array(repeating: "HTTP/1.1 200 OK", count: 5))
            #expect(live.upstream.requestCount("/users/x/subscription") == 5)
            #expect(sent?["tracestate"].isEmpty == true)
            #expect(sent?["traceparent"].first?.contains("-4bf92f3577b34da6a3ce929d0e0e4736-") == true)
            #expect(other.status == 200 && other.header("X-Cache") == "MISS")
            #expect(live.upstream.requestCount("/users/y/subscription") == 1)
            #expect(stats.circuit == "closed")
            #expect(stats.fetches == 6 && stats.failures == 0)
        }
    }

    /// A request the HTTP client refuses to send (here a service header's value that configuration checks would keep
    /// out) answers that request 502 `upstream-request-invalid`, echoing nothing of it, and counts nothing: not a
    /// fetch, not a failure, not toward the circuit however often it happens; nothing reaches the upstream.
    @Test func aRequestTheHTTPClientRefusesFailsAloneAndCountsNothing() async throws {
        let refused = UpstreamProtection(headers: [UpstreamHeader(name: "X-Key", value: "key\u{7f}")])
        try await withService(LiveService.start(protection: [.subscription: refused], gateClock: ManualClock())) { live in
            var answers: [LiveService.Answer] = []
            for user in 0..<8 { answers.append(try await live.request(.GET, "/v1/users/u\(user)/subscription")) }
            let stats = try await Self.upstreamStats(live)
            await live.stop()

            for answer in answers {
                #expect(answer.status == 502)
                #expect(answer.header("Content-Type") == "application/problem+json")
                #expect(answer.body.contains(Problem.typeURI("upstream-request-invalid")))
                #expect(!answer.body.contains("key"))
            }
            #expect(live.upstream.requestTargets.isEmpty)
            #expect(stats.circuit == "closed")
            #expect(stats.fetches == 0 && stats.failures == 0)
        }
    }
}
