import Clocks
import Foundation
import HTTPRouting
import JSONLogging
import Logging
@testable import Settings
import TestSupport
import Testing
import UnifiedCache

@testable import UnicacheApp

/// CONTRACT §7.4: a request's id is returned, sent upstream with the fetch it caused (the leader's for a
/// coalesced fetch) and written in that request's log lines; service credentials are never logged.
@Suite(.timeLimit(.minutes(10)), .serialized) struct RequestCorrelationTests {
    /// A debug JSON logger as the service installs it: the request id comes from the handler's task.
    static func jsonLogger(_ collector: LineCollector) -> Logger {
        Logger(label: "unicache") { label in
            JSONLogHandler(label: label, level: .debug, output: collector.output, metadataProvider: LoggingBootstrap.requestID, clock: SystemWallClock())
        }
    }

    static func objects(_ collector: LineCollector) throws -> [[String: Any]] {
        try collector.lines.map { line in
            try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        }
    }

    static func messages(of id: String, in lines: [[String: Any]]) -> [String] {
        lines.filter { line in
            line["requestId"] as? String == id && (line["metadata"] as? [String: Any])?["requestId"] as? String == id
        }.compactMap { $0["message"] as? String }
    }

    @Test func theClientsIDIsReturnedSentUpstreamAndInEveryLogLineOfTheRequest() async throws {
        let collector = LineCollector()
        let protection = [
            UpstreamDomain.activities: UpstreamProtection(headers: [UpstreamHeader(name: "Authorization", value: "Bearer s3cret")])
        ]
        try await withService(LiveService.start(protection: protection, logger: Self.jsonLogger(collector))) { live in
            live.upstream.reply("/users/a/profile", .serverError)
            let cold = try await live.request(.GET, "/v1/users/a/activities", headers: [("X-Request-ID", "trace-123")])
            let failed = try await live.request(.GET, "/v1/users/a/profile", headers: [("X-Request-ID", "trace-err")])
            let generated = try await live.request(.GET, "/v1/users/a/activities")
            await live.stop()

            #expect(cold.status == 200 && cold.header("X-Request-ID") == "trace-123")
            #expect(failed.status == 502 && failed.header("X-Request-ID") == "trace-err")
            #expect(live.upstream.lastHeaders("/users/a/activities")?[RequestID.headerName] == ["trace-123"])
            #expect(live.upstream.lastHeaders("/users/a/profile")?[RequestID.headerName] == ["trace-err"])
            let id = try #require(generated.header("X-Request-ID"))
            #expect(generated.header("X-Cache") == "HIT" && RequestID(validating: id) != nil && id != "trace-123")

            let lines = try Self.objects(collector)
            // The router's line, the fetcher's and (for the failure) the cache core's, each with the id.
            #expect(Self.messages(of: "trace-123", in: lines).sorted() == ["request", "upstream answered"])
            #expect(Self.messages(of: "trace-err", in: lines).sorted() == ["fetch failed", "request", "upstream fetch failed"])
            #expect(Self.messages(of: id, in: lines) == ["request"])
            #expect(!collector.lines.contains { $0.contains("s3cret") })
        }
    }

    @Test func aCoalescedFetchCarriesTheLeadersIDAndEveryAnswerItsOwn() async throws {
        try await withService(LiveService.start()) { live in
            let latch = Latch()
            live.upstream.set("/users/b/profile", .gated(latch, .json(#"{"name":"a"}"#)))
            let leader = Task { try await live.request(.GET, "/v1/users/b/profile", headers: [("X-Request-ID", "leader")]) }
            await live.upstream.waitForRequests("/users/b/profile", count: 1)
            let followers = Task {
                try await withThrowingTaskGroup(of: (String, String?).self) { group in
                    for index in 0..<20 {
                        group.addTask {
                            let answer = try await live.request(
                                .GET, "/v1/users/b/profile", headers: [("X-Request-ID", "follower-\(index)")])
                            return ("follower-\(index)", answer.header("X-Request-ID"))
                        }
                    }
                    return try await group.reduce(into: [(String, String?)]()) { $0.append($1) }
                }
            }
            latch.open()
            let leaderAnswer = try await leader.value
            let echoed = try await followers.value
            await live.stop()

            #expect(leaderAnswer.header("X-Request-ID") == "leader")
            #expect(echoed.count == 20 && echoed.allSatisfy { $0.0 == $0.1 })
            #expect(live.upstream.requestCount("/users/b/profile") == 1)
            #expect(live.upstream.lastHeaders("/users/b/profile")?[RequestID.headerName] == ["leader"])
        }
    }
}
