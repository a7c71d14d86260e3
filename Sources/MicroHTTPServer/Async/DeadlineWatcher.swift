import Dispatch
import NIOConcurrencyHelpers

/// Answers every request still unanswered at its deadline with 504, running `step` every `tick` of real time (the
/// step reads the server's clock, `ServerCore.elapsed`), from `start()` (when the daemon starts) until `stop()`. The
/// handler is not cancelled (its result is discarded); shutdown cancels all handlers.
///
/// It sleeps while no async request is pending: a step that leaves `pending` empty suspends the timer, and `wake()`
/// (each admitted async request) resumes it, so an idle server is not woken ten times a second. Both happen under
/// the watcher's lock, the emptiness read inside it: a request admitted while a step decides to sleep wakes the timer
/// once the step has suspended it.
///
/// A dispatch timer on a queue of its own, not a task: a task waits its turn on Swift's cooperative pool (as many
/// threads as CPUs), and handlers or other work keeping that pool busy held requests past their deadline (a full test
/// suite on two loaded CPUs kept a 200 ms deadline's 504 back over 20 s).
final class DeadlineWatcher: @unchecked Sendable {  // `timer` changes under `state`'s lock, or alone once stopped
    private enum State {
        case idle
        case started
        /// Started, with the timer suspended until `wake()`.
        case asleep
        case stopped
    }

    private let queue = DispatchQueue(label: "MicroHTTPServer.deadlines")
    private let timer: any DispatchSourceTimer
    private let state = NIOLockedValueBox(State.idle)

    init(tick: Duration, pending: PendingJobs, step: @escaping @Sendable () -> Void) {
        let nanoseconds = Int(tick / .nanoseconds(1))
        timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(
            deadline: .now() + .nanoseconds(nanoseconds), repeating: .nanoseconds(nanoseconds),
            leeway: .nanoseconds(nanoseconds / 10))
        timer.setEventHandler { [weak self] in
            step()
            self?.sleepIfIdle(pending)
        }
    }

    func start() {
        state.withLockedValue { state in
            guard case .idle = state else { return }
            state = .started
            timer.resume()
        }
    }

    /// Resumes the steps if they sleep: an async request was admitted.
    func wake() {
        state.withLockedValue { state in
            guard case .asleep = state else { return }
            state = .started
            timer.resume()
        }
    }

    /// Whether the steps sleep (no async request was pending at the last one).
    var isAsleep: Bool {
        state.withLockedValue { state in
            if case .asleep = state { return true }
            return false
        }
    }

    private func sleepIfIdle(_ pending: PendingJobs) {
        state.withLockedValue { state in
            guard case .started = state, pending.count == 0 else { return }
            state = .asleep
            timer.suspend()
        }
    }

    /// Returns once the timer's last step has ended, so that nothing touches a connection after the daemon stops.
    func stop() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            guard let suspended = stopping() else { return continuation.resume() }
            timer.setCancelHandler { continuation.resume() }
            timer.cancel()
            // A suspended source (never resumed, or asleep) runs its cancel handler only once resumed.
            if suspended { timer.resume() }
        }
    }

    /// Stops the timer from synchronous code (the server's deinit), returning once no step runs.
    func cancel() {
        guard let suspended = stopping() else { return }
        timer.cancel()
        if suspended { timer.resume() }
        queue.sync {}  // the steps run on this serial queue: one under way has ended, and none follows a cancel
    }

    /// Marks the watcher stopped: whether its timer was suspended (never started, or asleep), or nil when it was
    /// already stopped.
    private func stopping() -> Bool? {
        state.withLockedValue { state in
            defer { state = .stopped }
            switch state {
            case .idle, .asleep: return true
            case .started: return false
            case .stopped: return nil
            }
        }
    }
}
