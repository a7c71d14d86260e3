import HTTPRouting
import ServiceLifecycle
import Synchronization
import Testing
@testable import MicroHTTPServer

@Suite(.serialized) struct ServerConcurrencyTests {
    @Test func slowAsyncRequestsRunConcurrentlyWhileSyncRequestsAnswerAtOnce() async throws {
        let started = Signals()
        let finished = Atomic<Int>(0)
        var router = Router()
        router.get("/slow/{n}") { request in
            started.signal()
            try await Task.sleep(for: .seconds(1))
            finished.add(1, ordering: .relaxed)
            return .text(request.pathParameters["n"] ?? "-")
        }
        router.get("/fast", immediate: { _ in .text("fast") }) { _ in .text("slow path") }
        try await withLiveServer(router: router) { port, _ in
            let clock = ContinuousClock()
            let start = clock.now
            try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<200 {
                    group.addTask {
                        let response = try await RawHTTPClient.get(port: port, "/slow/\(index)")
                        return response.status == 200 && response.text == "\(index)"
                    }
                }
                await started.wait(for: 200)
                let fast = try await RawHTTPClient.get(port: port, "/fast")
                #expect(fast.text == "fast")
                // Answered while all 200 slow handlers were still awaiting.
                #expect(finished.load(ordering: .relaxed) == 0)
                var ok = 0
                for try await success in group where success { ok += 1 }
                #expect(ok == 200)
            }
            // Not serialised: 200 one-second handlers finish in about one second (bound from the issue).
            #expect(clock.now - start < .seconds(2))
        }
    }

    @Test func gracefulShutdownLetsInFlightRequestsFinish() async throws {
        let started = Signals()
        var router = Router()
        router.get("/slow") { _ in
            started.signal()
            try await Task.sleep(for: .milliseconds(500))
            return .text("done")
        }
        let server = MicroHTTPServer(configuration: .test(), responder: router, logger: quietLogger)
        let port = try server.start()
        let group = ServiceGroup(configuration: ServiceGroupConfiguration(services: [server], logger: quietLogger))
        try await withThrowingTaskGroup(of: Void.self) { tasks in
            tasks.addTask { try await group.run() }
            let statuses = try await withThrowingTaskGroup(of: Int.self) { clients in
                for _ in 0..<50 {
                    clients.addTask { try await RawHTTPClient.get(port: port, "/slow").status }
                }
                await started.wait(for: 50)
                await group.triggerGracefulShutdown()
                var statuses: [Int] = []
                for try await status in clients { statuses.append(status) }
                return statuses
            }
            #expect(statuses.count == 50)
            #expect(statuses.allSatisfy { $0 == 200 })
            try await tasks.waitForAll()
        }
        #expect(server.port == nil)
        #expect(server.openRequestCount == 0)
        // The daemon is gone: nothing listens on the port any more.
        await #expect(throws: RawClientError.self) { try await RawHTTPClient.get(port: port, "/slow") }
    }

    @Test func contextsAreReleasedAfterMalformedAndNormalRequests() async throws {
        var router = Router()
        router.get("/x") { _ in .text("x") }
        let server = MicroHTTPServer(configuration: .test(maxBodyBytes: 10), responder: router, logger: quietLogger)
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
