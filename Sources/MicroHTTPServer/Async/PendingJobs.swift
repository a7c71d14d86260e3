/// The async requests queued or running, bounded by `maxPendingRequests`, with their deadlines.
///
/// One shared watcher answers overdue requests with 504 (a per-request timer would leave a pending
/// dispatch timer behind for every request, up to `requestTimeout` long, and double the async path's cost).
final class PendingJobs: Sendable {
    private let jobs = Locked<[ObjectIdentifier: RequestContext]>([:])
    private let limit: Int

    init(limit: Int) {
        self.limit = limit
    }

    var count: Int { jobs.withLock { $0.count } }

    /// Takes a slot; false when the queue is full.
    func reserve(_ context: RequestContext) -> Bool {
        jobs.withLock { jobs in
            guard jobs.count < limit else { return false }
            jobs[ObjectIdentifier(context)] = context
            return true
        }
    }

    /// Frees the slot once the job's work has ended.
    func release(_ context: RequestContext) {
        _ = jobs.withLock { $0.removeValue(forKey: ObjectIdentifier(context)) }
    }

    /// Still-unanswered requests whose deadline has passed.
    func overdue(at now: ContinuousClock.Instant) -> [RequestContext] {
        jobs.withLock { jobs in
            jobs.values.filter { context in
                guard let deadline = context.deadline else { return false }
                return deadline <= now && context.isWaiting
            }
        }
    }
}
