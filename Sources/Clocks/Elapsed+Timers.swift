/// The service's two timer shapes, over one monotonic clock: a deadline a task waits for (a queued waiter's time-out)
/// and a tick repeated until its task is cancelled (a key set's refresh, a sweep, a trim).
extension Elapsed {
    /// Starts a task that calls `action` once this clock reaches `deadline` (a reading), unless it is cancelled first:
    /// cancel the returned task to disarm the timer.
    public func timer(at deadline: Duration, _ action: @escaping @Sendable () async -> Void) -> Task<Void, Never> {
        Task {
            do { try await sleep(until: deadline) } catch { return }
            await action()
        }
    }

    /// Calls `tick` every `interval` (the first call one interval from now, the next one interval after a call
    /// returns) until the calling task is cancelled or `tick` returns `false`. `tick` runs on the caller's actor.
    public func repeating(
        every interval: Duration, isolation: isolated (any Actor)? = #isolation, _ tick: () async -> Bool
    ) async {
        while !Task.isCancelled {
            do { try await sleep(for: interval) } catch { return }
            guard await tick() else { return }
        }
    }
}
