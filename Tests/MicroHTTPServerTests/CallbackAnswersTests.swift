import Dispatch
import HTTPRouting
import NIOConcurrencyHelpers
import TestSupport
import Testing
@testable import MicroHTTPServer

/// `Dispatch.callback`: a request answered from another thread without a task (a shared hit from a Redis worker),
/// or by its async handler when the callback declines or replies nil; with one answer, one observation and one
/// slot per request either way.
@Suite(.timeLimit(.minutes(2)), .serialized) struct CallbackAnswersTests {
    /// Observations of answered requests, by status.
    private final class Observed: Sendable {
        let statuses = NIOLockedValueBox<[Int]>([])
        func record(_ record: RequestRecord) { statuses.withLockedValue { $0.append(record.status) } }
    }

    @Test(arguments: [1, 2]) func aReplyFromAnotherThreadAnswersWithoutTheAsyncHandler(pollingThreads: Int) async throws {
        let observed = Observed()
        var router = Router(observer: observed.record)
        router.get("/cb/{n}", callback: { request, reply in
            let n = request.pathParameters["n"] ?? "-"
            DispatchQueue.global().async { reply(.text("callback \(n)")) }
            return true
        }) { _ in .text("async") }
        try await withLiveServer(.test(pollingThreads: pollingThreads), router: router) { port, server in
            let texts = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<200 {
                    group.addTask { try await RawHTTPClient.get(port: port, "/cb/\(index)").text == "callback \(index)" }
                }
                return try await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
            }
            #expect(texts == 200)
            // The replying thread frees a slot right after it hands the answer over (ServerCore.enqueue), so a client
            // may read its answer just before: under ThreadSanitizer one slot was still held when the last answer
            // arrived. Wait (bounded) for the count to settle.
            await waitUntil("every slot is free") { server.core.pending.count == 0 }
        }
        #expect(observed.statuses.withLockedValue { $0.count == 200 && $0.allSatisfy { $0 == 200 } })
    }

    @Test func aDeclineOrANilReplyTakesTheAsyncHandler() async throws {
        let observed = Observed()
        var router = Router(observer: observed.record)
        router.get("/decline", callback: { _, _ in false }) { _ in .text("async") }
        router.get("/nil", callback: { _, reply in
            DispatchQueue.global().async { reply(nil) }
            return true
        }) { _ in .text("async after nil") }
        router.get("/nil-at-once", callback: { _, reply in
            reply(nil)
            return true
        }) { _ in .text("async after an immediate nil") }
        try await withLiveServer(router: router) { port, _ in
            let declined = try await RawHTTPClient.get(port: port, "/decline")
            let afterNil = try await RawHTTPClient.get(port: port, "/nil")
            let afterImmediateNil = try await RawHTTPClient.get(port: port, "/nil-at-once")
            #expect(declined.text == "async")
            #expect(afterNil.text == "async after nil")
            #expect(afterImmediateNil.text == "async after an immediate nil")
        }
        #expect(observed.statuses.withLockedValue { $0 } == [200, 200, 200])
    }

    /// A reply that does not come by the deadline: 504, once; the late reply is dropped and frees the slot.
    @Test func aReplyPastTheDeadlineIsDroppedAndFreesTheSlot() async throws {
        let held = NIOLockedValueBox<[@Sendable (Response?) -> Void]>([])
        let observed = Observed()
        var router = Router(observer: observed.record)
        router.get("/late", callback: { _, reply in
            held.withLockedValue { $0.append(reply) }
            return true
        }) { _ in .text("async") }
        router.getNow()
        try await withLiveServer(.test(requestTimeout: .milliseconds(200)), router: router) { port, server in
            let late = try await RawHTTPClient.get(port: port, "/late")
            #expect(late.status == 504)
            #expect(server.core.pending.count == 1)
            for reply in held.withLockedValue({ $0 }) { reply(.text("too late")) }
            #expect(server.core.pending.count == 0)
            let now = try await RawHTTPClient.get(port: port, "/now")
            #expect(now.text == "now")
        }
        #expect(observed.statuses.withLockedValue { $0 } == [504, 200])
    }
}
