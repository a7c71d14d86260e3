import NIOConcurrencyHelpers

/// The async requests running, bounded by `maxPendingRequests`, with their deadlines and tasks.
///
/// One shared watcher answers overdue requests with 504 (a per-request timer would leave a pending
/// dispatch timer behind for every request, up to `requestTimeout` long, and double the async path's cost).
/// Closed at graceful shutdown: from then on nothing new is admitted, and `waitUntilEmpty` tells when the
/// admitted ones have finished.
final class PendingJobs: Sendable {
    enum Admission {
        case admitted
        case full
        case closed
    }

    private struct Entry {
        let context: RequestContext
        var task: Task<Void, Never>?
        /// Tasks attached after the first (a request an access check admitted after waiting runs its route's in
        /// another).
        var more: [Task<Void, Never>] = []
    }

    private struct State {
        var entries: [ObjectIdentifier: Entry] = [:]
        var closed = false
        var emptyWaiter: CheckedContinuation<Void, Never>?
    }

    private let state = NIOLockedValueBox(State())
    private let limit: Int

    init(limit: Int) {
        self.limit = limit
    }

    var count: Int { state.withLockedValue { $0.entries.count } }

    /// Takes a slot, unless the queue is full or closed.
    func reserve(_ context: RequestContext) -> Admission {
        state.withLockedValue { state in
            if state.closed { return .closed }
            guard state.entries.count < limit else { return .full }
            state.entries[ObjectIdentifier(context)] = Entry(context: context)
            return .admitted
        }
    }

    /// Remembers a task running `context`'s work, so that shutdown can cancel it (unless the work already ended).
    func attach(_ task: Task<Void, Never>, to context: RequestContext) {
        state.withLockedValue { state in
            let id = ObjectIdentifier(context)
            if state.entries[id]?.task == nil {
                state.entries[id]?.task = task
            } else {
                state.entries[id]?.more.append(task)
            }
        }
    }

    /// Frees the slot once the job's work has ended.
    func release(_ context: RequestContext) {
        let waiter = state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
            state.entries.removeValue(forKey: ObjectIdentifier(context))
            guard state.entries.isEmpty else { return nil }
            defer { state.emptyWaiter = nil }
            return state.emptyWaiter
        }
        waiter?.resume()
    }

    /// Admits nothing more.
    func close() {
        state.withLockedValue { $0.closed = true }
    }

    /// Returns once no job is left (after `close`, so none can be added). One waiter at a time; it also
    /// returns when the calling task is cancelled.
    func waitUntilEmpty() async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { continuation in
                let resumeNow = state.withLockedValue { state -> Bool in
                    if state.entries.isEmpty || Task.isCancelled { return true }
                    state.emptyWaiter = continuation
                    return false
                }
                if resumeNow { continuation.resume() }
            }
        } onCancel: {
            state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
                defer { state.emptyWaiter = nil }
                return state.emptyWaiter
            }?.resume()
        }
    }

    /// The requests still running, with their tasks cancelled (shutdown's drain deadline has passed).
    func cancelAll() -> [RequestContext] {
        state.withLockedValue { state in
            state.entries.values.map { entry in
                entry.task?.cancel()
                for task in entry.more { task.cancel() }
                return entry.context
            }
        }
    }

    /// Still-unanswered requests whose deadline has passed.
    func overdue(at now: ContinuousClock.Instant) -> [RequestContext] {
        state.withLockedValue { state in
            state.entries.values.compactMap { entry in
                guard let deadline = entry.context.deadline, deadline <= now, entry.context.isWaiting else { return nil }
                return entry.context
            }
        }
    }
}
