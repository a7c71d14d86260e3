import Dispatch
import NIOConcurrencyHelpers

/// Answers every request still unanswered at its deadline with 504, looking every `min(100 ms, timeout / 4)` of real
/// time at the server's clock (`ServerCore.elapsed`), from `start()` (when the daemon starts) until `stop()`. The
/// handler is not cancelled (its result is discarded); shutdown cancels all handlers.
///
/// A dispatch timer on a queue of its own, not a task: a task waits its turn on Swift's cooperative pool (as many
/// threads as CPUs), and handlers or other work keeping that pool busy held requests past their deadline (a full test
/// suite on two loaded CPUs kept a 200 ms deadline's 504 back over 20 s).
final class DeadlineWatcher: @unchecked Sendable {  // `timer` is resumed and cancelled only under `state`'s lock
    private enum State {
        case idle
        case started
        case stopped
    }

    private let queue = DispatchQueue(label: "MicroHTTPServer.deadlines")
    private let timer: any DispatchSourceTimer
    private let state = NIOLockedValueBox(State.idle)

    init(core: ServerCore) {
        let tick = min(Duration.milliseconds(100), core.configuration.requestTimeout / 4)
        let nanoseconds = Int(tick / .nanoseconds(1))
        timer = DispatchSource.makeTimerSource(queue: queue)
        timer.schedule(
            deadline: .now() + .nanoseconds(nanoseconds), repeating: .nanoseconds(nanoseconds),
            leeway: .nanoseconds(nanoseconds / 10))
        timer.setEventHandler { core.answerOverdue(at: core.elapsed.now()) }
    }

    func start() {
        state.withLockedValue { state in
            guard case .idle = state else { return }
            state = .started
            timer.resume()
        }
    }

    /// Returns once the timer's last step has ended, so that nothing touches a connection after the daemon stops.
    func stop() async {
        await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
            guard let wasIdle = stopping() else { return continuation.resume() }
            timer.setCancelHandler { continuation.resume() }
            timer.cancel()
            // A source never resumed runs its cancel handler only once resumed.
            if wasIdle { timer.resume() }
        }
    }

    /// Stops the timer from synchronous code (the server's deinit), returning once no step runs.
    func cancel() {
        guard let wasIdle = stopping() else { return }
        timer.cancel()
        if wasIdle { timer.resume() }
        queue.sync {}  // the steps run on this serial queue: one under way has ended, and none follows a cancel
    }

    /// Marks the watcher stopped: whether it had never started, or nil when it was already stopped.
    private func stopping() -> Bool? {
        state.withLockedValue { state in
            defer { state = .stopped }
            switch state {
            case .idle: return true
            case .started: return false
            case .stopped: return nil
            }
        }
    }
}
