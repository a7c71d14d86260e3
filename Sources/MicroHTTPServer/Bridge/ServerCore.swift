import HTTPRouting
import Logging
import Synchronization

/// What the C callbacks need, shared by the MHD thread and the Swift tasks. MHD holds it unretained as
/// its `cls`; the server keeps it alive until the daemon has stopped.
final class ServerCore: Sendable {
    let responder: any HTTPResponder
    let configuration: MicroHTTPServerConfiguration
    let logger: Logger
    let jobs: AsyncStream<Job>
    let jobSink: AsyncStream<Job>.Continuation
    /// Async requests queued or running (bounded by `maxPendingRequests`), with their deadlines.
    let pending: PendingJobs
    /// Set at graceful shutdown: answers carry `Connection: close`, new async work gets 503.
    let draining = Atomic<Bool>(false)
    let openRequests = OpenRequests()

    init(responder: any HTTPResponder, configuration: MicroHTTPServerConfiguration, logger: Logger) {
        self.responder = responder
        self.configuration = configuration
        self.logger = logger
        pending = PendingJobs(limit: configuration.maxPendingRequests)
        (jobs, jobSink) = AsyncStream.makeStream(of: Job.self)
    }

    /// Suspends the request's connection and queues its async work. False (nothing done) when the
    /// queue is full; a request arriving during shutdown is answered 503.
    func enqueue(_ context: RequestContext, work: @escaping @Sendable () async -> Response) -> Bool {
        context.deadline = .now + configuration.requestTimeout
        guard pending.reserve(context) else { return false }
        context.phase = .suspended
        MHDConnection.suspend(context.connection)
        if case .enqueued = jobSink.yield(Job(context: context, work: work)) { return true }
        context.complete(ServerProblems.shuttingDown)
        pending.release(context)
        return true
    }
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
