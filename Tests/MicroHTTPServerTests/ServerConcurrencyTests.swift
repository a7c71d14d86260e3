import Glibc
import HTTPRouting
import ServiceLifecycle
import Synchronization
import TestSupport
import Testing
@testable import MicroHTTPServer

@Suite(.timeLimit(.minutes(10)), .serialized) struct ServerConcurrencyTests {
    @Test func slowAsyncRequestsRunConcurrentlyWhileSyncRequestsAnswerAtOnce() async throws {
        let started = Signals()
        let latch = Latch()
        let finished = Atomic<Int>(0)
        var router = Router()
        router.get("/slow/{n}") { request in
            started.signal()
            await latch.wait()
            finished.add(1, ordering: .relaxed)
            return .text(request.pathParameters["n"] ?? "-")
        }
        router.handle(.get, "/fast") { _ in .now(.text("fast")) }
        try await withLiveServer(router: router) { port, _ in
            try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<200 {
                    group.addTask {
                        let response = try await RawHTTPClient.get(port: port, "/slow/\(index)")
                        return response.status == 200 && response.text == "\(index)"
                    }
                }
                // Not serialised: all 200 handlers are in flight at once (each waits at the latch until the end).
                await started.wait(for: 200)
                let fast = try await RawHTTPClient.get(port: port, "/fast")
                #expect(fast.text == "fast")
                // Answered while all 200 slow handlers were still waiting.
                #expect(finished.load(ordering: .relaxed) == 0)
                latch.open()
                var ok = 0
                for try await success in group where success { ok += 1 }
                #expect(ok == 200)
            }
        }
    }

    @Test func gracefulShutdownLetsInFlightRequestsFinish() async throws {
        let started = Signals()
        let release = Latch()
        var router = Router()
        router.get("/slow") { _ in
            started.signal()
            await release.wait()
            return .text("done")
        }
        let server = MicroHTTPServer(configuration: .test(), responder: router, ticker: ContinuousClock(), logger: quietLogger)
        let port = try server.start()
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: [server], logger: quietLogger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            let responses = try await withThrowingTaskGroup(of: RawResponse.self) { clients in
                for _ in 0..<50 {
                    clients.addTask { try await RawHTTPClient.get(port: port, "/slow") }
                }
                await started.wait(for: 50)
                await group.triggerGracefulShutdown()
                // Answered once the server drains (it stops listening first), not before: a handler that slept
                // instead answered before the shutdown began once, under ThreadSanitizer on two loaded CPUs.
                await waitUntil("the server stops listening") { server.port == nil }
                release.open()
                var responses: [RawResponse] = []
                for try await response in clients { responses.append(response) }
                return responses
            }
            #expect(responses.count == 50)
            #expect(responses.allSatisfy { $0.status == 200 && $0.text == "done" })
            // Answered while draining: keep-alive clients are told to go away.
            #expect(responses.allSatisfy { $0.headers["Connection"]?.lowercased() == "close" })
            try await tasks.waitForAll()
        }
        #expect(server.port == nil)
        #expect(server.openRequestCount == 0)
        // The daemon is gone: nothing listens on the port any more.
        await #expect(throws: RawClientError.self) { try await RawHTTPClient.get(port: port, "/slow") }
    }

    /// Draining stops accepting at once, with MHD listening itself (one thread) and with the shim's acceptor
    /// (a pool): a connection made after that is never served, while the request in flight still is.
    @Test(arguments: [1, 2]) func aConnectionMadeWhileDrainingIsNotServed(pollingThreads: Int) async throws {
        let started = Signals()
        let latch = Latch()
        var router = Router()
        router.getHeld("/held", started: started, until: latch)
        router.getNow()
        var late: Task<RawResponse?, Never>?
        try await withLiveServer(.test(pollingThreads: pollingThreads), router: router) { port, server async throws in
            #expect(try await RawHTTPClient.get(port: port, "/now").text == "now")
            let held = Task { try await RawHTTPClient.get(port: port, "/held") }
            await started.wait(for: 1)
            server.beginDraining()
            // Refused, or left in the backlog until the daemon stops: either way never answered.
            late = Task { try? await RawHTTPClient.get(port: port, "/now") }
            latch.open()
            #expect(try await held.value.text == "held")
        }
        #expect(await late?.value == nil)
    }

    @Test func contextsAreReleasedAfterMalformedAndNormalRequests() async throws {
        var router = Router()
        router.get("/x") { _ in .text("x") }
        let server = MicroHTTPServer(configuration: .test(maxBodyBytes: 10), responder: router, ticker: ContinuousClock(), logger: quietLogger)
        let port = try server.start()
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: [server], logger: quietLogger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            _ = try await RawHTTPClient.get(port: port, "/x")
            _ = try await RawHTTPClient.exchange(port: port, "POST /x HTTP/1.1\r\nHost: h\r\nContent-Length: 99\r\n\r\n")
            _ = try? await RawHTTPClient.exchange(port: port, "GET /x HTTP/1.1\r\nBroken Header\r\n\r\n")
            _ = try? await RawHTTPClient.exchange(port: port, "GET /x HTTP/1.1\r\n\r\n")
            await group.triggerGracefulShutdown()
            try await tasks.waitForAll()
        }
        #expect(server.openRequestCount == 0)
    }
}

@Suite(.timeLimit(.minutes(10)), .serialized) struct ServerStressTests {
    /// Many keep-alive connections alternate sync and async requests: every suspended connection is
    /// resumed exactly once and answered in order.
    @Test func keepAliveConnectionsMixSyncAndAsyncRequests() async throws {
        var router = Router()
        router.handle(.get, "/fast/{n}") { request in .now(.text("f" + (request.pathParameters["n"] ?? ""))) }
        router.get("/async/{n}") { request in
            await Task.yield()
            return .text("a" + (request.pathParameters["n"] ?? ""))
        }
        try await withLiveServer(router: router) { port, _ in
            let failures = try await withThrowingTaskGroup(of: Int.self) { group in
                for connection in 0..<16 {
                    group.addTask {
                        let result: Result<Int, RawClientError> = await RawHTTPClient.onThread {
                            Result { () throws(RawClientError) -> Int in
                                let socket = try RawHTTPClient.connect(port: port)
                                defer { _ = close(socket) }
                                var failures = 0
                                for index in 0..<60 {
                                    let kind = index % 2 == 0 ? "fast" : "async"
                                    let n = "\(connection)-\(index)"
                                    try RawHTTPClient.send(socket, Array("GET /\(kind)/\(n) HTTP/1.1\r\nHost: h\r\n\r\n".utf8))
                                    let response = try RawHTTPClient.readResponse(socket, expectBody: true, checkClosed: false)
                                    if response.status != 200 || response.text != String(kind.prefix(1)) + n { failures += 1 }
                                }
                                return failures
                            }
                        }
                        return try result.get()
                    }
                }
                return try await group.reduce(0, +)
            }
            #expect(failures == 0)
        }
    }

    /// Handlers answering while the deadline watcher answers 504 race it: each request gets exactly one answer, 200
    /// or 504, and none hangs. The watcher's step is run by the test (as if every deadline had passed) while the
    /// handlers are released, so the race needs no real-time deadline; the held handlers always lose it.
    @Test func handlersRacingTheDeadlineGetExactlyOneAnswer() async throws {
        let started = Signals()
        let (release, hold) = (Latch(), Latch())
        var router = Router()
        router.get("/race/{n}") { request in
            started.signal()
            let n = Int(request.pathParameters["n"] ?? "0") ?? 0
            await (n % 16 == 15 ? hold : release).wait()
            return .text("ok")
        }
        try await withLiveServer(.test(requestTimeout: .seconds(3600)), router: router) { port, server in
            let statuses = try await withThrowingTaskGroup(of: Int.self) { group in
                for index in 0..<120 {
                    group.addTask { try await RawHTTPClient.get(port: port, "/race/\(index)").status }
                }
                await started.wait(for: 120)
                let past = server.core.elapsed.now() + .seconds(7200)
                let watcher = Task.detached { for _ in 0..<50 { server.core.answerOverdue(at: past) } }
                release.open()
                await watcher.value
                hold.open()
                var statuses: [Int] = []
                for try await status in group { statuses.append(status) }
                return statuses
            }
            #expect(statuses.count == 120)
            #expect(statuses.allSatisfy { $0 == 200 || $0 == 504 })
            #expect(statuses.filter { $0 == 504 }.count >= 7)
        }
    }
}
