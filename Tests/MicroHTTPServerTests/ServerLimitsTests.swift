import NIOConcurrencyHelpers
import Glibc
import HTTPRouting
import Logging
import TestSupport
import Testing
@testable import MicroHTTPServer

@Suite(.timeLimit(.minutes(10)), .serialized) struct ServerLimitsTests {
    static func router(handlerRan: Signals<Void> = Signals()) -> Router {
        var router = Router()
        router.post("/upload") { request in
            handlerRan.signal()
            return .text("got \(request.body.count)")
        }
        return router
    }

    @Test func declaredOversizedBodyIs413BeforeTheBodyIsSent() async throws {
        try await withLiveServer(.test(maxBodyBytes: 1 << 20), router: Self.router()) { port, _ in
            // Headers only: if the server waited for the 100 MB body, this would never answer.
            let response = try await RawHTTPClient.exchange(
                port: port, "POST /upload HTTP/1.1\r\nHost: h\r\nContent-Length: 104857600\r\n\r\n", checkClosed: true)
            #expect(response.status == 413)
            #expect(response.headers["Content-Type"] == "application/problem+json")
            #expect(response.closed)
        }
    }

    @Test func chunkedBodyCrossingTheLimitIs413AtTheEnd() async throws {
        let ran = Signals()
        try await withLiveServer(.test(maxBodyBytes: 1000), router: Self.router(handlerRan: ran)) { port, _ in
            let chunk = String(repeating: "y", count: 600)
            let response = try await RawHTTPClient.exchange(
                port: port,
                "POST /upload HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\n\r\n258\r\n\(chunk)\r\n258\r\n\(chunk)\r\n0\r\n\r\n")
            #expect(response.status == 413)
            #expect(response.headers["Content-Type"] == "application/problem+json")
        }
        ran.finish()
        #expect(await ran.next() == nil, "the handler ran")
    }

    @Test func conflictingContentLengthsAre400AndClose() async throws {
        try await withLiveServer(router: Self.router()) { port, _ in
            let response = try await RawHTTPClient.exchange(
                port: port, "POST /upload HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nContent-Length: 6\r\n\r\nhello!",
                checkClosed: true)
            #expect(response.status == 400)
            #expect(response.headers["Content-Type"] == "application/problem+json")
            #expect(response.headers["Connection"]?.lowercased() == "close")
            #expect(response.closed)
        }
    }

    @Test func contentLengthWithTransferEncodingIs400AndClose() async throws {
        try await withLiveServer(router: Self.router()) { port, _ in
            let response = try await RawHTTPClient.exchange(
                port: port,
                "POST /upload HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n5\r\nhello\r\n0\r\n\r\n",
                checkClosed: true)
            #expect(response.status == 400)
            #expect(response.headers["Connection"]?.lowercased() == "close")
            #expect(response.closed)
        }
    }

    /// A field name is a token (RFC 9110 section 5.1), and whitespace between it and its colon is a 400 (RFC 9112
    /// section 5.1). libmicrohttpd keeps such bytes in the name, so `Content-Length : 3` or `Content-Length<VT>: 3` was
    /// no framing header to it: the body was left to be read as the next request.
    @Test func aHeaderNameThatIsNotATokenIs400AndClose() async throws {
        try await withLiveServer(router: Self.router()) { port, _ in
            for request in [
                "POST /upload HTTP/1.1\r\nHost: h\r\nContent-Length : 3\r\n\r\nabc",
                "POST /upload HTTP/1.1\r\nHost: h\r\nContent-Length: 3\r\nTransfer-Encoding\t: chunked\r\n\r\n"
                    + "3\r\nabc\r\n0\r\n\r\n",
                "POST /upload HTTP/1.1\r\nHost: h\r\nX-Other : 1\r\nContent-Length: 0\r\n\r\n",
                // A vertical tab or a control byte a proxy may trim: libmicrohttpd keeps it, so no framing header.
                "POST /upload HTTP/1.1\r\nHost: h\r\nContent-Length\u{0B}: 3\r\n\r\nabc",
                "POST /upload HTTP/1.1\r\nHost: h\r\nContent-Length\u{01}: 3\r\n\r\nabc",
                "GET /upload HTTP/1.1\r\nHost: h\r\nBad Name: 1\r\n\r\n",
            ] {
                let response = try await RawHTTPClient.exchange(port: port, request, checkClosed: true)
                #expect(response.status == 400, "\(request)")
                #expect(response.headers["Content-Type"] == "application/problem+json")
                #expect(response.text.contains("colon"))
                #expect(response.closed)
            }
            let spacedValue = try await RawHTTPClient.exchange(
                port: port, "POST /upload HTTP/1.1\r\nHost: h\r\nContent-Length:  3\r\n\r\nabc")
            #expect(spacedValue.text == "got 3")
        }
    }

    /// A raw NUL byte in the target: libmicrohttpd hands the target over cut at it (`/upload\0/x` was `/upload`,
    /// and `DELETE /v1/users/u1\0/x` erased u1), as if the request had named the shorter path.
    @Test func aNULByteInTheTargetIs400AndClose() async throws {
        let ran = Signals<Void>()
        try await withLiveServer(router: Self.router(handlerRan: ran)) { port, _ in
            for target in ["/upload\u{0}/x", "/upload\u{0}", "/upload?q=1\u{0}2", "/upload\u{0}HTTP/1.1"] {
                let response = try await RawHTTPClient.exchange(
                    port: port, "POST \(target) HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n", checkClosed: true)
                #expect(response.status == 400, "\(Array(target.utf8))")
                #expect(response.text.contains("NUL"))
                #expect(response.closed)
            }
            for target in ["/upload", "/upload?q=1&r=2", "/upload?"] {
                let response = try await RawHTTPClient.exchange(
                    port: port, "POST \(target) HTTP/1.1\r\nHost: h\r\nContent-Length: 0\r\n\r\n")
                #expect(response.text == "got 0", "\(target)")
            }
            let http10 = try await RawHTTPClient.exchange(
                port: port, "POST /upload HTTP/1.0\r\nContent-Length: 0\r\n\r\n")
            #expect(http10.text == "got 0")
        }
        ran.finish()
        var runs = 0
        while await ran.next() != nil { runs += 1 }
        #expect(runs == 4)
    }

    @Test func http11WithoutHostIs400Problem() async throws {
        try await withLiveServer(router: Self.router()) { port, _ in
            let response = try await RawHTTPClient.exchange(
                port: port, "POST /upload HTTP/1.1\r\nContent-Length: 0\r\n\r\n", checkClosed: true)
            #expect(response.status == 400)
            #expect(response.headers["Content-Type"] == "application/problem+json")
            #expect(response.closed)
            let http10 = try await RawHTTPClient.exchange(port: port, "POST /upload HTTP/1.0\r\nContent-Length: 0\r\n\r\n")
            #expect(http10.status == 200)
        }
    }

    /// RFC 9112: a request with two `Host` lines is a 400 (section 3.2), and chunked applied twice is forbidden
    /// (section 6.1): two `Transfer-Encoding: chunked` lines, which a proxy taking one would frame differently, are a 400 too.
    @Test func aSecondHostOrTransferEncodingIs400AndClose() async throws {
        try await withLiveServer(router: Self.router()) { port, _ in
            for request in [
                "POST /upload HTTP/1.1\r\nHost: h\r\nHost: other\r\nContent-Length: 0\r\n\r\n",
                "GET /upload HTTP/1.1\r\nHost: h\r\nhost: h\r\n\r\n",
                "POST /upload HTTP/1.1\r\nHost: h\r\nTransfer-Encoding: chunked\r\nTransfer-Encoding: chunked\r\n\r\n"
                    + "3\r\nabc\r\n0\r\n\r\n",
            ] {
                let response = try await RawHTTPClient.exchange(port: port, request, checkClosed: true)
                #expect(response.status == 400, "\(request)")
                #expect(response.headers["Content-Type"] == "application/problem+json")
                #expect(response.closed)
            }
        }
    }

    /// RFC 9112 section 3.2: a Host value that is no host (and optional port) is a 400; names, IPv4, IPv6 literals,
    /// ports and an empty value are served.
    @Test func aHostValueThatIsNoHostIs400AndClose() async throws {
        try await withLiveServer(router: Self.router()) { port, _ in
            for host in ["a b", "a/b", "user@h", "h?x", "h#x", "h\\x", "h\u{7F}", "bücher.example"] {
                let request = "POST /upload HTTP/1.1\r\nHost: \(host)\r\nContent-Length: 0\r\n\r\n"
                let response = try await RawHTTPClient.exchange(port: port, request, checkClosed: true)
                #expect(response.status == 400, "\(host)")
                #expect(response.headers["Content-Type"] == "application/problem+json")
                #expect(response.closed)
            }
            for host in ["127.0.0.1:8080", "[::1]:80", "Cache.example", "xn--bcher-kva.example", "h_1~x", ""] {
                let request = "POST /upload HTTP/1.1\r\nHost: \(host)\r\nContent-Length: 0\r\n\r\n"
                #expect(try await RawHTTPClient.exchange(port: port, request).status == 200, "\(host)")
            }
        }
    }

    @Test func identicalDuplicateContentLengthIsAccepted() async throws {
        let response = try await answer(
            to: "POST /upload HTTP/1.1\r\nHost: h\r\nContent-Length: 5\r\nContent-Length: 5\r\n\r\nhello",
            router: Self.router())
        #expect(response.status == 200)
        #expect(response.text == "got 5")
    }

    @Test func headersUpToSixKiBFitTheConnectionMemoryAndLargerAre431() async throws {
        #expect(MicroHTTPServerConfiguration().connectionMemoryLimit == 8 << 10)
        try await withLiveServer(router: Self.router()) { port, _ in
            let fits = String(repeating: "a", count: 6 << 10)
            let accepted = try await RawHTTPClient.exchange(
                port: port, "POST /upload HTTP/1.1\r\nHost: h\r\nX-Pad: \(fits)\r\nContent-Length: 0\r\n\r\n")
            #expect(accepted.status == 200)
            let tooLarge = String(repeating: "a", count: 9 << 10)
            let rejected = try await RawHTTPClient.exchange(
                port: port, "POST /upload HTTP/1.1\r\nHost: h\r\nX-Pad: \(tooLarge)\r\nContent-Length: 0\r\n\r\n")
            #expect(rejected.status == 431)
        }
    }

    @Test func asyncHandlerPastTheDeadlineGets504() async throws {
        var router = Router()
        router.get("/stuck") { _ in
            try await Task.sleep(for: .seconds(3600))
            return .text("late")
        }
        // The stuck handler is not cancelled at its deadline; shutdown cancels it after shutdownTimeout.
        let configuration = MicroHTTPServerConfiguration.test(
            requestTimeout: .seconds(1), shutdownTimeout: .seconds(1))
        try await withLiveServer(configuration, router: router) { port, server in
            let response = try await RawHTTPClient.get(port: port, "/stuck")
            #expect(response.status == 504)
            #expect(response.headers["Content-Type"] == "application/problem+json")
            #expect(response.text.contains("request-timeout"))
            // The connection is usable again: a later request on a fresh connection is still served.
            let second = try await RawHTTPClient.get(port: port, "/stuck")
            #expect(second.status == 504)
        }
    }

    @Test func fullAsyncQueueAnswers503() async throws {
        let started = Signals()
        let release = Latch()
        var router = Router()
        router.getHeld("/hold", started: started, until: release)
        try await withLiveServer(.test(maxPendingRequests: 1), router: router) { port, server in
            async let first = RawHTTPClient.get(port: port, "/hold")
            await started.wait(for: 1)
            let second = try await RawHTTPClient.get(port: port, "/hold")
            #expect(second.status == 503)
            #expect(second.headers["Retry-After"] != nil)
            #expect(second.headers["Content-Type"] == "application/problem+json")
            release.open()
            #expect(try await first.status == 200)
            // The slot is free again: freed just after the answer was handed over (so that shutdown waits for the
            // answer), which the client may read first.
            await waitUntil("the first request's slot is freed") { server.core.pending.count == 0 }
            let third = try await RawHTTPClient.get(port: port, "/hold")
            #expect(third.status == 200)
        }
    }

    /// Past `maxConnectionsPerIP` libmicrohttpd closes the extra connection (in its polling thread, or in the
    /// acceptor's thread with a pool) and says so in the log, at debug level.
    @Test(arguments: [1, 2]) func aConnectionOverThePerIPLimitIsClosedAndLogged(pollingThreads: Int) async throws {
        let store = CapturingLogHandler.Store()
        let logger = CapturingLogHandler.logger(store)
        var router = Router()
        router.getNow()
        let configuration = MicroHTTPServerConfiguration.test(pollingThreads: pollingThreads, maxConnectionsPerIP: 1)
        try await withLiveServer(configuration, router: router, logger: logger) { port, _ in
            let first = try await RawHTTPClient.connected(port: port)
            defer { close(first) }
            let answer = try await RawHTTPClient.response(first, after: "GET /now HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            #expect(answer.text == "now")
            await #expect(throws: RawClientError.self) { try await RawHTTPClient.get(port: port, "/now") }
            #expect(store.messages.contains { $0.hasPrefix("libmicrohttpd: ") && $0.contains("limit") })
        }
    }

    /// At the connection limit further connections wait (in the listen backlog) and are served as others close:
    /// none is refused, with MHD listening itself (one thread) or the shim's acceptor (a pool). A burst over the
    /// limit is also what once hung a polling thread in libmicrohttpd 0.9.75 (a lock left held), so the test
    /// ends with a shutdown that must complete. A connection whose request has not arrived yet counts as idle and
    /// may be drained for a waiting one (as nginx drains it; seen under ThreadSanitizer, where a client task can lag
    /// between connect and send): its client connects again, as HTTP clients do after a close without an answer.
    @Test(arguments: [1, 2]) func connectionsOverTheLimitWaitAndAreServed(pollingThreads: Int) async throws {
        var router = Router()
        router.getNow()
        try await withLiveServer(.test(pollingThreads: pollingThreads, maxConnections: 4), router: router) { port, _ in
            let answers = try await withThrowingTaskGroup(of: RawResponse.self) { group in
                for _ in 0..<32 {
                    group.addTask {
                        for _ in 0..<3 {
                            if let answer = try? await RawHTTPClient.exchange(
                                port: port, "GET /now HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                            {
                                return answer
                            }
                        }
                        return try await RawHTTPClient.exchange(
                            port: port, "GET /now HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n")
                    }
                }
                var answers: [RawResponse] = []
                for try await answer in group { answers.append(answer) }
                return answers
            }
            #expect(answers.count == 32)
            #expect(answers.allSatisfy { $0.status == 200 && $0.text == "now" })
        }
    }
}

/// The router's observer sees the answer the client got, once: the server's 504 or 503 when the server answered
/// instead of the handler, never a handler's late answer.
@Suite(.timeLimit(.minutes(10)), .serialized) struct ObservedAnswerTests {
    final class Records: Sendable {
        let all = NIOLockedValueBox<[RequestRecord]>([])
        var statuses: [Int] { all.withLockedValue { $0.map(\.status).sorted() } }
    }

    static func router(_ records: Records, started: Signals<Void>, release: Latch) -> Router {
        var router = Router(observer: { record in records.all.withLockedValue { $0.append(record) } })
        router.getHeld("/hold", started: started, until: release)
        return router
    }

    @Test func aRequestPastItsDeadlineIsObservedAs504NotAsTheLateAnswer() async throws {
        let records = Records()
        let started = Signals()
        let release = Latch()
        let configuration = MicroHTTPServerConfiguration.test(requestTimeout: .seconds(1))
        try await withLiveServer(configuration, router: Self.router(records, started: started, release: release)) {
            port, _ in
            let response = try await RawHTTPClient.get(port: port, "/hold")
            #expect(response.status == 504)
            release.open()
        }
        // The server has stopped: the handler has returned its late 200 by now.
        #expect(records.statuses == [504])
        #expect(records.all.withLockedValue { $0.first?.route } == "/hold")
    }

    @Test func aFullQueuesAnswerIsObservedAs503() async throws {
        let records = Records()
        let started = Signals()
        let release = Latch()
        try await withLiveServer(
            .test(maxPendingRequests: 1), router: Self.router(records, started: started, release: release)
        ) { port, _ in
            async let first = RawHTTPClient.get(port: port, "/hold")
            await started.wait(for: 1)
            let second = try await RawHTTPClient.get(port: port, "/hold")
            #expect(second.status == 503)
            release.open()
            let firstStatus = try await first.status
            #expect(firstStatus == 200)
        }
        #expect(records.statuses == [200, 503])
    }
}
