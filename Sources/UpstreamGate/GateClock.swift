import NIOConcurrencyHelpers
import UnifiedCache

/// The upstream gate's time: a monotonic reading since an arbitrary origin, and sleeping until one. Injectable,
/// so that budgets, pauses, back-offs and waiting deadlines are tested without sleeping.
public protocol GateClock: Sendable {
    func now() -> Duration
    /// Returns at `deadline` or later; throws `CancellationError` when the task is cancelled first.
    func sleep(until deadline: Duration) async throws
}

/// The system's monotonic clock.
public struct SystemGateClock: GateClock {
    private let origin = ContinuousClock.now

    public init() {}

    public func now() -> Duration { origin.duration(to: .now) }

    public func sleep(until deadline: Duration) async throws {
        try await Task.sleep(until: origin.advanced(by: deadline), clock: .continuous)
    }
}

/// A clock tests move by hand; sleepers wake when it is moved past their deadline (`package`: a test hook, not API).
package final class ManualGateClock: GateClock {
    private struct Sleeper {
        var id: UInt64
        var deadline: Duration
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var now: Duration = .zero
        var sleepers: [Sleeper] = []
        var cancelled: Set<UInt64> = []
        var nextID: UInt64 = 0
    }

    private let state = NIOLockedValueBox(State())

    package init() {}

    package func now() -> Duration { state.withLockedValue { $0.now } }

    /// How many tasks sleep on the clock now (a test waits for a waiter to park before moving the clock).
    package var sleeping: Int { state.withLockedValue { $0.sleepers.count } }

    package func advance(by duration: Duration) {
        let woken = state.withLockedValue { state -> [Sleeper] in
            state.now += duration
            let now = state.now
            let due = state.sleepers.filter { $0.deadline <= now }
            state.sleepers.removeAll { $0.deadline <= now }
            return due
        }
        for sleeper in woken { sleeper.continuation.resume() }
    }

    package func sleep(until deadline: Duration) async throws {
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
