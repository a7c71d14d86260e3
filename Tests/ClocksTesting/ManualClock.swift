import NIOConcurrencyHelpers

/// A monotonic clock tests move by hand instead of sleeping: `advance(by:)` moves it on and wakes every sleeper
/// whose deadline it reaches. Code under test takes it as its `any Clock<Duration>`.
public final class ManualClock: Clock, Sendable {
    /// A reading: the time since the clock was made.
    public struct Instant: InstantProtocol {
        public var offset: Duration

        public init(offset: Duration) { self.offset = offset }

        public func advanced(by duration: Duration) -> Instant { Instant(offset: offset + duration) }
        public func duration(to other: Instant) -> Duration { other.offset - offset }
        public static func < (left: Instant, right: Instant) -> Bool { left.offset < right.offset }
    }

    private struct Sleeper {
        var id: UInt64
        var deadline: Instant
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now = Instant(offset: .zero)
        var sleepers: [Sleeper] = []
        var cancelled: Set<UInt64> = []
        var nextID: UInt64 = 0
    }

    private let state = NIOLockedValueBox(State())

    public init() {}

    public var now: Instant { state.withLockedValue { $0.now } }
    public var minimumResolution: Duration { .zero }

    /// How many tasks sleep on the clock now (a test waits for a timer or waiter to park before it moves the clock).
    public var sleepers: Int { state.withLockedValue { $0.sleepers.count } }

    /// How many sleep until later than `span` from now: a service's own pace (a once-a-second timer on the same
    /// clock) left out of what a test waits for.
    public func sleepers(beyond span: Duration) -> Int {
        state.withLockedValue { state in
            let horizon = state.now.advanced(by: span)
            return state.sleepers.count { horizon < $0.deadline }
        }
    }

    public func advance(by duration: Duration) {
        let woken = state.withLockedValue { state -> [Sleeper] in
            state.now = state.now.advanced(by: duration)
            let now = state.now
            defer { state.sleepers.removeAll { $0.deadline <= now } }
            return state.sleepers.filter { $0.deadline <= now }
        }
        for sleeper in woken { sleeper.continuation.resume() }
    }

    /// Returns once the clock reaches `deadline`; throws `CancellationError` when the task is cancelled first.
    public func sleep(until deadline: Instant, tolerance: Duration? = nil) async throws {
        let id = state.withLockedValue { state -> UInt64 in
            state.nextID += 1
            return state.nextID
        }
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let outcome = state.withLockedValue { state -> Result<Void, CancellationError>? in
                    if state.cancelled.remove(id) != nil { return .failure(CancellationError()) }
                    if deadline <= state.now { return .success(()) }
                    state.sleepers.append(Sleeper(id: id, deadline: deadline, continuation: continuation))
                    return nil
                }
                if let outcome { continuation.resume(with: outcome) }
            }
        } onCancel: {
            let sleeper = state.withLockedValue { state -> Sleeper? in
                guard let index = state.sleepers.firstIndex(where: { $0.id == id }) else {
                    state.cancelled.insert(id)  // not parked yet: it throws when it parks
                    return nil
                }
                return state.sleepers.remove(at: index)
            }
            sleeper?.continuation.resume(throwing: CancellationError())
        }
    }
}
