import Foundation
import NIOConcurrencyHelpers
import TestSupport
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
    private let calls = NIOLockedValueBox(0)
    private let latch = Latch()
    private let result: Result<FetchedValue, FetchError>
    /// Each call's number as it starts.
    let started = Signals(of: Int.self)

    init(_ result: Result<FetchedValue, FetchError>) {
        self.result = result
    }

    convenience init(body: String) {
        self.init(.success(FetchedValue(body: Array(body.utf8))))
    }

    var count: Int { calls.withLockedValue { $0 } }

    func open() { latch.open() }

    func fetch(_ request: FetchRequest) async throws(FetchError) -> FetchedValue {
        let number = calls.withLockedValue { count in
            count += 1
            return count
        }
        started.signal(number)
        await latch.wait()
        // A cancelled shared load must be visible to the tests that check it is not cancelled.
        if Task.isCancelled { throw .unavailable("cancelled") }
        return try result.get()
    }

    /// Waits until `calls` more fetches have started.
    func waitForStarts(_ calls: Int) async { await started.wait(for: calls) }
}
