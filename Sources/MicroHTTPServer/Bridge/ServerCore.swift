import Clocks
import HTTPRouting
import Logging
import Synchronization

/// What the C callbacks need, shared by the MHD thread and the Swift tasks. MHD holds it unretained as
/// its `cls`; the server keeps it alive until the daemon has stopped.
final class ServerCore: Sendable {
    /// The responder's `answer`, held in a closure: read from the existential property, the responder (a `Router`
    /// and its closures) was copied on every request, a retain and a release per field.
    let answer: @Sendable (
        _ method: HTTPMethod, _ target: String, _ headers: HTTPHeaders, _ body: [UInt8], _ clientAddress: ClientAddress,
        _ requestID: RequestID?
    ) -> Answer
    let configuration: MicroHTTPServerConfiguration
    let logger: Logger
    /// Async requests running (bounded by `maxPendingRequests`), with their deadlines.
    let pending: PendingJobs
    /// Answers 504 past each request's deadline, from the daemon's start until `run()` has drained.
    let deadlines: DeadlineWatcher
    /// Set at graceful shutdown: answers carry `Connection: close`, new async work gets 503.
    let draining = Atomic<Bool>(false)
    let openRequests = OpenRequests()
    /// Set with `configuration.requestIDs`.
    let requestIDs: RequestIDGenerator?
    /// The monotonic clock of request deadlines and the drain at shutdown.
    let elapsed: Elapsed

    init(
        responder: any HTTPResponder, configuration: MicroHTTPServerConfiguration, ticker: any Clock<Duration>,
        logger: Logger
    ) {
        let elapsed = Elapsed(ticker)
        self.elapsed = elapsed
        answer = { method, target, headers, body, clientAddress, requestID in
            responder.answer(
                method: method, target: target, headers: headers, body: body, clientAddress: clientAddress,
                requestID: requestID)
        }
        self.configuration = configuration
        self.logger = logger
        let pending = PendingJobs(limit: configuration.maxPendingRequests)
        self.pending = pending
        deadlines = DeadlineWatcher(tick: min(.milliseconds(100), configuration.requestTimeout / 4), pending: pending) {
            Self.answerOverdue(pending, at: elapsed.now(), logger: logger)
        }
        requestIDs = configuration.requestIDs ? RequestIDGenerator() : nil
    }

    /// Takes a slot for the request, with its deadline, suspends its connection and starts `later` with the
    /// request as its reply (a reply on any thread, at once included, resumes it). The request holds its slot,
    /// deadline and shutdown's wait until the reply. Nothing is done when the answer is `.full` or `.closed`
    /// (shutting down): the caller answers 503.
    func enqueue(_ context: RequestContext, _ later: Later) -> PendingJobs.Admission {
        context.deadline = elapsed.now() + configuration.requestTimeout
        let admission = pending.reserve(context)
        guard case .admitted = admission else { return admission }
        context.phase = .suspended
        MHDConnection.suspend(context.connection)
        deadlines.wake()
        later.start(SuspendedRequest(context: context, pending: pending))
        return .admitted
    }
}

/// A suspended request as the reply of its `.later` answer. If the deadline watcher (or shutdown) answered
/// first, the late response is dropped; either way the reply frees the request's slot (its work has ended).
struct SuspendedRequest: Reply {
    let context: RequestContext
    let pending: PendingJobs

    func callAsFunction(_ response: Response) {
        context.complete(response)
        pending.release(context)
    }

    func attach(_ task: Task<Void, Never>) {
        pending.attach(task, to: context)
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
