import Access
import NIOConcurrencyHelpers

/// A wall clock the test moves; its sleepers wake when `advance` reaches their deadline.
public final class TestClock: AccessClock {
    public static let start = 1_800_000_000.0

    private struct State {
        var time = TestClock.start
        var nextID = 0
        var sleepers: [Int: (deadline: Double, continuation: CheckedContinuation<Void, any Error>)] = [:]
    }

    private let state = NIOLockedValueBox(State())

    public init() {}

    public func now() -> Double { state.withLockedValue { $0.time } }

    /// Moves time on and wakes every sleeper whose deadline it reaches.
    public func advance(_ seconds: Double) {
        let woken = state.withLockedValue { state in
            state.time += seconds
            let due = state.sleepers.filter { $0.value.deadline <= state.time }
            for id in due.keys { state.sleepers[id] = nil }
            return due.values.map(\.continuation)
        }
        for continuation in woken { continuation.resume() }
    }

    /// How many tasks sleep on this clock now (a test waits for a timer to be asleep before it moves time).
    public var sleeperCount: Int { state.withLockedValue { $0.sleepers.count } }

    public func sleep(seconds: Double) async throws {
        let id = state.withLockedValue { state in
            defer { state.nextID += 1 }
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resumeNow = state.withLockedValue { state -> Bool in
                    if Task.isCancelled { return true }
                    state.sleepers[id] = (state.time + seconds, continuation)
                    return false
                }
                if resumeNow { continuation.resume(throwing: CancellationError()) }
            }
        } onCancel: {
            let continuation = state.withLockedValue { $0.sleepers.removeValue(forKey: id)?.continuation }
            continuation?.resume(throwing: CancellationError())
        }
    }
}
