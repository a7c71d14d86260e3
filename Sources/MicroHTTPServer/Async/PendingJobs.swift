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

    /// The entries in numbered places, each request told its place (`RequestContext.pendingPlace`), and the free
    /// places: taking and freeing one hashes nothing (keyed by the context's identity, a dictionary hashed it twice
    /// per request, ~500 instructions of every `.later` answer).
    private struct State {
        var places: [Entry?] = []
        var free: [Int] = []
        var closed = false
        var emptyWaiter: CheckedContinuation<Void, Never>?

        /// The slots taken.
        var count: Int { places.count - free.count }

        /// The place `context` holds, if it holds one.
        func place(of context: RequestContext) -> Int? {
            guard let place = context.pendingPlace, places[place]?.context === context else { return nil }
            return place
        }
    }

    private let state = NIOLockedValueBox(State())
    private let limit: Int

    init(limit: Int) {
        self.limit = limit
    }

    var count: Int { state.withLockedValue { $0.count } }

    /// Takes a slot, unless the queue is full or closed.
    func reserve(_ context: RequestContext) -> Admission {
        state.withLockedValue { state in
            if state.closed { return .closed }
            guard state.count < limit else { return .full }
            let place: Int
            if let free = state.free.popLast() {
                place = free
                state.places[place] = Entry(context: context)
            } else {
                place = state.places.count
                state.places.append(Entry(context: context))
            }
            context.pendingPlace = place
            return .admitted
        }
    }

    /// Remembers a task running `context`'s work, so that shutdown can cancel it (unless the work already ended).
    func attach(_ task: Task<Void, Never>, to context: RequestContext) {
        state.withLockedValue { state in
            guard let place = state.place(of: context) else { return }
            if state.places[place]?.task == nil {
                state.places[place]?.task = task
            } else {
                state.places[place]?.more.append(task)
            }
        }
    }

    /// Frees the slot once the job's work has ended.
    func release(_ context: RequestContext) {
        let waiter = state.withLockedValue { state -> CheckedContinuation<Void, Never>? in
            guard let place = state.place(of: context) else { return nil }
            state.places[place] = nil
            state.free.append(place)
            context.pendingPlace = nil
            guard state.count == 0 else { return nil }
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
                    if state.count == 0 || Task.isCancelled { return true }
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
            state.places.compactMap { $0 }.map { entry in
                entry.task?.cancel()
                for task in entry.more { task.cancel() }
                return entry.context
            }
        }
    }

    /// Still-unanswered requests whose deadline has passed.
    func overdue(at now: Duration) -> [RequestContext] {
        state.withLockedValue { state in
            state.places.compactMap { entry in
                guard let entry, let deadline = entry.context.deadline, deadline <= now, entry.context.isWaiting else {
                    return nil
                }
                return entry.context
            }
        }
    }
}
