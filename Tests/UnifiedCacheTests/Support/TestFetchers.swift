import Foundation
import NIOConcurrencyHelpers
import UnifiedCache

/// A fetcher answering from a closure, counting calls.
final class ScriptedFetcher: Fetcher {
    private let calls = NIOLockedValueBox(0)
    private let answer: @Sendable (FetchRequest, Int) throws(FetchError) -> FetchedValue

    /// `answer` gets the request and the 1-based call number.
    init(_ answer: @escaping @Sendable (FetchRequest, Int) throws(FetchError) -> FetchedValue) {
        self.answer = answer
    }

    /// Always the same body.
    convenience init(body: String, storable: Bool = true) {
        self.init { _, _ in FetchedValue(body: Array(body.utf8), storable: storable) }
    }

    /// Always the same error.
    convenience init(error: FetchError) {
        self.init { _, _ throws(FetchError) in throw error }
    }

    var count: Int { calls.withLockedValue { $0 } }

    func fetch(_ request: FetchRequest) async throws(FetchError) -> FetchedValue {
        let number = calls.withLockedValue { count in
            count += 1
            return count
        }
        return try answer(request, number)
    }
}

/// A fetcher that holds every call until the test opens it; reports each call as it starts.
final class HeldFetcher: Fetcher {
    private struct State {
        var open = false
        var waiting: [CheckedContinuation<Void, Never>] = []
        var calls = 0
    }

    private let state = NIOLockedValueBox(State())
    private let result: Result<FetchedValue, FetchError>
    let started: AsyncStream<Int>
    private let startedContinuation: AsyncStream<Int>.Continuation

    init(_ result: Result<FetchedValue, FetchError>) {
        self.result = result
        (started, startedContinuation) = AsyncStream.makeStream(of: Int.self)
    }

    convenience init(body: String) {
        self.init(.success(FetchedValue(body: Array(body.utf8))))
    }

    var count: Int { state.withLockedValue { $0.calls } }

    func open() {
        let waiting = state.withLockedValue { state in
            state.open = true
            defer { state.waiting.removeAll() }
            return state.waiting
        }
        for continuation in waiting { continuation.resume() }
    }

    func fetch(_ request: FetchRequest) async throws(FetchError) -> FetchedValue {
        let number = state.withLockedValue { state in
            state.calls += 1
            return state.calls
        }
        startedContinuation.yield(number)
        await withCheckedContinuation { continuation in
            let resumeNow = state.withLockedValue { state in
                if state.open { return true }
                state.waiting.append(continuation)
                return false
            }
            if resumeNow { continuation.resume() }
        }
        // A cancelled shared load must be visible to the tests that check it is not cancelled.
        if Task.isCancelled { throw .unavailable("cancelled") }
        return try result.get()
    }

    /// Waits until `calls` fetches have started.
    func waitForStarts(_ calls: Int) async {
        var seen = 0
        for await _ in started {
            seen += 1
            if seen >= calls { return }
        }
    }
}
