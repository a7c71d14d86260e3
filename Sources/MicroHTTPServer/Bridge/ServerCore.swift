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
    /// Async requests queued or running (bounded by `maxPendingRequests`).
    let pending = Atomic<Int>(0)
    /// Set at graceful shutdown: answers carry `Connection: close`, new async work gets 503.
    let draining = Atomic<Bool>(false)
    let openRequests = OpenRequests()

    init(responder: any HTTPResponder, configuration: MicroHTTPServerConfiguration, logger: Logger) {
        self.responder = responder
        self.configuration = configuration
        self.logger = logger
        (jobs, jobSink) = AsyncStream.makeStream(of: Job.self)
    }

    /// Takes a slot for one async request; false when the queue is full.
    func reservePendingSlot() -> Bool {
        let now = pending.wrappingAdd(1, ordering: .relaxed).newValue
        if now > configuration.maxPendingRequests {
            pending.wrappingSubtract(1, ordering: .relaxed)
            return false
        }
        return true
    }

    func releasePendingSlot() {
        pending.wrappingSubtract(1, ordering: .relaxed)
    }

    /// Suspends the request's connection and queues its async work; answers 503 when shutting down.
    func enqueue(_ context: RequestContext, work: @escaping @Sendable () async -> Response) {
        context.phase = .suspended
        MHDConnection.suspend(context.connection)
        if case .enqueued = jobSink.yield(Job(context: context, work: work)) { return }
        releasePendingSlot()
        context.complete(ServerProblems.shuttingDown.response)
    }
}

/// The problems the server itself answers with.
enum ServerProblems {
    static let shuttingDown = Problem.serviceUnavailable(
        detail: "The server is shutting down.", retryAfterSeconds: 1, type: Problem.typeURI("shutting-down"))
    static let queueFull = Problem.serviceUnavailable(
        detail: "Too many requests are waiting; try again shortly.", retryAfterSeconds: 1,
        type: Problem.typeURI("overloaded"))
    static let timedOut = Problem.gatewayTimeout(
        detail: "The request was not handled within the server's deadline.", type: Problem.typeURI("request-timeout"))
}
