/// Monotonic time as the `Duration` since a fixed origin, read from any `Clock<Duration>` (the system's
/// `ContinuousClock`, or a clock a test moves by hand): the unit of deadlines, pauses and back-offs, and the one way
/// to sleep until one of them.
public struct Elapsed: Sendable {
    private let read: @Sendable () -> Duration
    private let sleeper: @Sendable (Duration) async throws -> Void

    /// Readings of `clock`, from zero now.
    public init(_ clock: any Clock<Duration>) {
        self.init(opening: clock)
    }

    private init<C: Clock<Duration>>(opening clock: C) {
        let origin = clock.now
        read = { origin.duration(to: clock.now) }
        sleeper = { try await clock.sleep(until: origin.advanced(by: $0), tolerance: nil) }
    }

    /// The time since the origin.
    public func now() -> Duration { read() }

    /// Returns at `deadline` (a reading) or later; throws `CancellationError` when the task is cancelled first.
    public func sleep(until deadline: Duration) async throws { try await sleeper(deadline) }

    /// Sleeps for `duration` from now; throws `CancellationError` when the task is cancelled first.
    public func sleep(for duration: Duration) async throws { try await sleeper(now() + duration) }
}
