import Foundation
import HTTPRouting
import NIOConcurrencyHelpers
import TestSupport
import Testing
@testable import MicroHTTPServer

/// The request deadline's 504 does not wait for Swift's cooperative pool: with every thread of the pool kept busy (as
/// CPU-bound handlers, or the other tests of a full suite, can keep it), a request past its deadline is answered.
@Suite(.timeLimit(.minutes(10)), .serialized) struct DeadlineWatcherTests {
    /// What the pool's spinners and the client share.
    final class Busy: Sendable {
        let width = ProcessInfo.processInfo.activeProcessorCount
        let spinning = NIOLockedValueBox(0)
        /// Opened by the last spinner to start: every thread of the pool is held.
        let allSpinning = Latch()
        let answered = NIOLockedValueBox(false)
        /// A spinner reached its bound before the client had its answer: the answer waited for the pool.
        let gaveUp = NIOLockedValueBox(false)

        /// Holds a thread of the pool until the client has its answer, or for at most a minute.
        func spin() {
            if spinning.withLockedValue({ spinning in
                spinning += 1
                return spinning == width
            }) {
                allSpinning.open()
            }
            let end = ContinuousClock.now + .seconds(60)
            while !answered.withLockedValue({ $0 }) {
                if ContinuousClock.now > end {
                    gaveUp.withLockedValue { $0 = true }
                    return
                }
            }
        }
    }

    @Test func aBusyCooperativePoolDoesNotHoldBackTheDeadlinesAnswer() async throws {
        let held = NIOLockedValueBox<[any Reply]>([])
        var router = Router()
        router.handle(.get, "/late") { _ in .later(Later { reply in held.withLockedValue { $0.append(reply) } }) }
        try await withLiveServer(.test(requestTimeout: .seconds(1)), router: router) { port, _ in
            let busy = Busy()
            let spinners = (0..<busy.width).map { _ in Task.detached { busy.spin() } }
            // The client runs on a thread of its own (the pool has none to spare): it asks once every thread of the
            // pool spins.
            let client = ThreadTask { () throws(RawClientError) -> RawResponse in
                defer { busy.answered.withLockedValue { $0 = true } }
                busy.allSpinning.blockingWait()
                let socket = try RawHTTPClient.connect(port: port)
                defer { close(socket) }
                try RawHTTPClient.send(socket, Array("GET /late HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
                return try RawHTTPClient.readResponse(socket, expectBody: true, checkClosed: false)
            }
            let response = try await client.value
            for spinner in spinners { await spinner.value }
            for reply in held.withLockedValue({ $0 }) { reply(.text("too late")) }
            #expect(response.status == 504)
            #expect(!busy.gaveUp.withLockedValue { $0 }, "the 504 came only once the pool was free again")
        }
    }

    /// Stress: requests admitted while the watcher's step decides to sleep (a step every millisecond, a request
    /// pending for a few of them at a time, every other one admitted once the watcher sleeps). A request pending is
    /// never left with the timer suspended: steps follow each admission. (Without `wake()` the first admission while
    /// the watcher sleeps gets no step.)
    @Test func aRequestAdmittedWhileTheWatcherFallsAsleepWakesIt() async throws {
        let pending = PendingJobs(limit: 4)
        let steps = NIOLockedValueBox(0)
        let watcher = DeadlineWatcher(tick: .milliseconds(1), pending: pending) { steps.withLockedValue { $0 += 1 } }
        watcher.start()
        defer { watcher.cancel() }
        // Never dereferenced: the pending table and the watcher's test step do not touch the connection.
        let connection = try #require(OpaquePointer(bitPattern: 1))
        for round in 0..<400 {
            if round.isMultiple(of: 2) { await waitUntil("the idle watcher sleeps") { watcher.isAsleep } }
            let context = RequestContext(target: "/\(round)", connection: connection)
            #expect(pending.reserve(context) == .admitted)
            watcher.wake()
            let before = steps.withLockedValue { $0 }
            let stepped = await poll { steps.withLockedValue { $0 } > before + 1 }
            pending.release(context)
            guard stepped else {
                Issue.record("no step ran while request \(round) was pending")
                break
            }
        }
    }
}
