import HTTPRouting
import Logging
import Synchronization

/// What the C callbacks need, shared by the MHD thread and the Swift tasks. MHD holds it unretained as
/// its `cls`; the server keeps it alive until the daemon has stopped.
final class ServerCore: Sendable {
    let responder: any HTTPResponder
    let configuration: MicroHTTPServerConfiguration
    let logger: Logger
    /// Async requests running (bounded by `maxPendingRequests`), with their deadlines.
    let pending: PendingJobs
    /// Set at graceful shutdown: answers carry `Connection: close`, new async work gets 503.
    let draining = Atomic<Bool>(false)
    let openRequests = OpenRequests()
    /// Set with `configuration.requestIDs`.
    let requestIDs: RequestIDGenerator?

    init(responder: any HTTPResponder, configuration: MicroHTTPServerConfiguration, logger: Logger) {
        self.responder = responder
        self.configuration = configuration
        self.logger = logger
        pending = PendingJobs(limit: configuration.maxPendingRequests)
        requestIDs = configuration.requestIDs ? RequestIDGenerator() : nil
    }

    /// Suspends the request's connection and starts its async work in a task of its own (a task rather
    /// than a child of a task group: no queue to hop through, and the MHD thread never waits). Nothing is
    /// done when the answer is `.full` or `.closed` (shutting down): the caller answers 503.
    func enqueue(_ context: RequestContext, work: @escaping @Sendable () async -> Response) -> PendingJobs.Admission {
        let admission = suspend(context)
        guard case .admitted = admission else { return admission }
        start(Job(context: context, work: work))
        return .admitted
    }

    /// The same for a request `start` may answer without a task: suspended first, so that its reply (on any
    /// thread, at once included) resumes it; a task runs `work` only when `start` declines or replies nil.
    /// The request holds its slot, deadline and shutdown's wait either way.
    func enqueue(
        _ context: RequestContext, start: @Sendable (_ reply: @escaping @Sendable (Response?) -> Void) -> Bool,
        work: @escaping @Sendable () async -> Response
    ) -> PendingJobs.Admission {
        let admission = suspend(context)
        guard case .admitted = admission else { return admission }
        let job = Job(context: context, work: work)
        let started = start { response in
            guard let response else { return self.start(job) }
            context.complete(response)
            self.pending.release(context)
        }
        if !started { self.start(job) }
        return .admitted
    }

    /// Takes a slot for the request, with its deadline, and suspends its connection.
    private func suspend(_ context: RequestContext) -> PendingJobs.Admission {
        context.deadline = .now + configuration.requestTimeout
        let admission = pending.reserve(context)
        guard case .admitted = admission else { return admission }
        context.phase = .suspended
        MHDConnection.suspend(context.connection)
        return .admitted
    }

    private func start(_ job: Job) {
        pending.attach(Task { await self.execute(job) }, to: job.context)
    }
}

/// A suspended request and the async work that answers it.
struct Job: Sendable {
    let context: RequestContext
    let work: @Sendable () async -> Response
}

/// The responses the server itself answers with, rendered once.
enum ServerProblems {
    static let shuttingDown = Problem.serviceUnavailable(
        detail: "The server is shutting down.", retryAfterSeconds: 1, type: Problem.typeURI("shutting-down")
    ).response
    static let queueFull = Problem.serviceUnavailable(
        detail: "Too many requests are waiting; try again shortly.", retryAfterSeconds: 1,
        type: Problem.typeURI("overloaded")
    ).response
    static let timedOut = Problem.gatewayTimeout(
        detail: "The request was not handled within the server's deadline.", type: Problem.typeURI("request-timeout")
    ).response
}
