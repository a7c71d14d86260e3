import Dispatch
import HTTPRouting
import NIOConcurrencyHelpers
import TestSupport
import Testing
@testable import MicroHTTPServer

/// `Answer.later`: a request answered from another thread without a task (a shared hit from a Redis worker),
/// or by a task (`Later.task`) its start hands on to when it has nothing; with one answer, one observation and one
/// slot per request either way.
@Suite(.timeLimit(.minutes(2)), .serialized) struct LaterAnswersTests {
    /// Observations of answered requests, by status.
    private final class Observed: Sendable {
        let statuses = NIOLockedValueBox<[Int]>([])
        func record(_ record: RequestRecord) { statuses.withLockedValue { $0.append(record.status) } }
    }

    @Test(arguments: [1, 2]) func aReplyFromAnotherThreadAnswersWithoutTheAsyncHandler(pollingThreads: Int) async throws {
        let observed = Observed()
        var router = Router(observer: observed.record)
        router.handle(.get, "/cb/{n}") { request in
            let n = request.pathParameters["n"] ?? "-"
            return .later(Later { reply in DispatchQueue.global().async { reply(.text("callback \(n)")) } })
        }
        try await withLiveServer(.test(pollingThreads: pollingThreads), router: router) { port, server in
            let texts = try await withThrowingTaskGroup(of: Bool.self) { group in
                for index in 0..<200 {
                    group.addTask { try await RawHTTPClient.get(port: port, "/cb/\(index)").text == "callback \(index)" }
                }
                return try await group.reduce(into: 0) { $0 += $1 ? 1 : 0 }
            }
            #expect(texts == 200)
            // The replying thread frees a slot right after it hands the answer over (SuspendedRequest), so a client
            // may read its answer just before: under ThreadSanitizer one slot was still held when the last answer
            // arrived. Wait (bounded) for the count to settle.
            await waitUntil("every slot is free") { server.core.pending.count == 0 }
        }
        #expect(observed.statuses.withLockedValue { $0.count == 200 && $0.allSatisfy { $0 == 200 } })
    }

    @Test func aStartHandingOnToATaskIsAnsweredByIt() async throws {
        let observed = Observed()
        var router = Router(observer: observed.record)
        router.handle(.get, "/decline") { request in
            let work = Later.task(id: request.id) { .text("async") }
            return .later(Later { reply in work.start(reply) })
        }
        router.handle(.get, "/nil") { request in
            let work = Later.task(id: request.id) { .text("async after nil") }
            return .later(Later { reply in DispatchQueue.global().async { work.start(reply) } })
        }
        router.handle(.get, "/nil-at-once") { request in
            .later(.task(id: request.id) { .text("async after an immediate nil") })
        }
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

    /// A reply that does not come by the deadline: 504, once; the late reply is dropped and frees the slot. The
    /// deadline is read on the server's clock (a manual one here): the request is not overdue a second before it, and
    /// is answered once the clock passes it. (A reply that never comes at all is left out: under the full parallel
    /// suite it made live TLS and connection-drain tests of other servers in the process fail; see the report of
    /// issue 34.)
    @Test func aReplyPastTheDeadlineIsDroppedAndFreesTheSlot() async throws {
        let held = NIOLockedValueBox<[any Reply]>([])
        let observed = Observed()
        let ticker = ManualClock()
        var router = Router(observer: observed.record)
        router.handle(.get, "/late") { _ in .later(Later { reply in held.withLockedValue { $0.append(reply) } }) }
        router.getNow()
        try await withLiveServer(.test(requestTimeout: .seconds(30)), router: router, ticker: ticker) { port, server in
            async let late = RawHTTPClient.get(port: port, "/late")
            await waitUntil("the request is held") { held.withLockedValue { $0.count } == 1 }
            ticker.advance(by: .seconds(29))
            #expect(server.core.pending.overdue(at: server.core.elapsed.now()).isEmpty)
            ticker.advance(by: .seconds(1))
            #expect(try await late.status == 504)
            #expect(server.core.pending.count == 1)
            for reply in held.withLockedValue({ $0 }) { reply(.text("too late")) }
            #expect(server.core.pending.count == 0)
            let now = try await RawHTTPClient.get(port: port, "/now")
            #expect(now.text == "now")
        }
        #expect(observed.statuses.withLockedValue { $0 } == [504, 200])
    }

    /// The deadline watcher sleeps while no async request is pending (an idle server is not woken by its timer),
    /// and a request admitted while it sleeps wakes it: the request still gets its 504 once the clock passes its
    /// deadline, and the watcher sleeps again once the request's slot is free. (Without the wake the 504 never comes.)
    @Test func theDeadlineWatcherSleepsWhileIdleAndWakesForARequest() async throws {
        let held = NIOLockedValueBox<[any Reply]>([])
        let ticker = ManualClock()
        var router = Router()
        router.handle(.get, "/late") { _ in .later(Later { reply in held.withLockedValue { $0.append(reply) } }) }
        try await withLiveServer(.test(requestTimeout: .seconds(30)), router: router, ticker: ticker) { port, server in
            await waitUntil("the idle watcher sleeps") { server.core.deadlines.isAsleep }
            async let late = RawHTTPClient.get(port: port, "/late")
            await waitUntil("the request is held") { held.withLockedValue { $0.count } == 1 }
            ticker.advance(by: .seconds(30))
            let response = try await late
            #expect(response.status == 504)
            for reply in held.withLockedValue({ $0 }) { reply(.text("too late")) }
            await waitUntil("the watcher sleeps again") { server.core.deadlines.isAsleep }
        }
    }

    /// A full queue refuses a `.later` with 503 at once: its start is never called, and the observer is told.
    @Test func aLaterBeyondTheQueueLimitIs503AndNeverStarted() async throws {
        let held = NIOLockedValueBox<[any Reply]>([])
        let observed = Observed()
        var router = Router(observer: observed.record)
        router.handle(.get, "/held") { _ in .later(Later { reply in held.withLockedValue { $0.append(reply) } }) }
        try await withLiveServer(.test(maxPendingRequests: 1), router: router) { port, server in
            async let first = RawHTTPClient.get(port: port, "/held")
            await waitUntil("the first request holds the slot") { held.withLockedValue { $0.count } == 1 }
            let second = try await RawHTTPClient.get(port: port, "/held")
            #expect(second.status == 503)
            #expect(second.text.contains("overloaded"))
            #expect(held.withLockedValue { $0.count } == 1)
            for reply in held.withLockedValue({ $0 }) { reply(.text("first")) }
            #expect(try await first.text == "first")
            await waitUntil("every slot is free") { server.core.pending.count == 0 }
        }
        #expect(observed.statuses.withLockedValue { $0.sorted() } == [200, 503])
    }
}
