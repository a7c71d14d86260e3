import Synchronization

/// How a request is answered: now, on the server's I/O thread, or later, from any thread.
public enum Answer: Sendable {
    case now(Response)
    case later(Later)
}

/// A response given after the answer was returned: the server suspends the request (holding a slot of its queue,
/// under its deadline), then calls `start` once, on its I/O thread, with the `Reply` the response goes to. `start`
/// must not block; it replies once, on any thread, at once included (a Redis worker's reply, a task's end).
/// Async work is adapted to it by `Later.task`, the one place a request's task is made.
public struct Later: Sendable {
    public let start: @Sendable (_ reply: any Reply) -> Void
    /// Called once with the response the client actually got: the reply's, or the one the server answered with
    /// instead (its deadline's 504, a full queue's or shutdown's 503). Set by the router for its observer.
    public internal(set) var answered: (@Sendable (Response) -> Void)?

    public init(_ start: @escaping @Sendable (_ reply: any Reply) -> Void) {
        self.start = start
        self.answered = nil
    }
}

/// Where a `.later` answer's response goes (the server's suspended request). Only its first response counts.
public protocol Reply: Sendable {
    /// The response; the work has ended (a reply past the deadline is dropped, and frees the request's slot).
    func callAsFunction(_ response: Response)
    /// The task producing the response, so that shutdown can cancel it (`Later.task` attaches its own).
    func attach(_ task: Task<Void, Never>)
}

extension Later {
    /// The one place a request's task is made: `work` runs in a task of its own (not a child of a task group: no
    /// queue to hop through, and the I/O thread never waits) with `RequestID.current` bound to `id`, and its
    /// response is the reply. A thrown `Problem` becomes its response, cancellation (shutdown) a 504, any other
    /// error a 500.
    public static func task(id: RequestID?, _ work: @escaping @Sendable () async throws -> Response) -> Later {
        Later { reply in
            inTask(reply, id: id) { reply(await response(of: work)) }
        }
    }

    /// Runs `body` in a new task attached to `reply`, with `RequestID.current` bound to `id`.
    static func inTask(_ reply: any Reply, id: RequestID?, _ body: @escaping @Sendable () async -> Void) {
        reply.attach(Task { await RequestID.$current.withValue(id) { await body() } })
    }

    private static func response(of work: @Sendable () async throws -> Response) async -> Response {
        do {
            return try await work()
        } catch let problem as Problem {
            return problem.response
        } catch is CancellationError {
            return Problem.gatewayTimeout(detail: "The request was not handled in time.").response
        } catch {
            return Problem.internalError().response
        }
    }

    /// This answer as its reply gives it, awaited (an access check that waited, tests); `answered` is told.
    public func response() async -> Response {
        let response = await withCheckedContinuation { (continuation: CheckedContinuation<Response, Never>) in
            start(AwaitedReply(continuation))
        }
        answered?(response)
        return response
    }
}

extension Answer {
    /// The answer as the server gives it, awaited in a task (tests, an access check that waited): the response of
    /// `.now`, or `.later`'s reply (`answered` is told).
    public func response() async -> Response {
        switch self {
        case .now(let response): return response
        case .later(let later): return await later.response()
        }
    }
}

/// A reply resumed once; its task is not cancelled with the awaiting one (it ends on its own).
private final class AwaitedReply: Reply {
    private let continuation: CheckedContinuation<Response, Never>
    private let replied = Atomic<Bool>(false)

    init(_ continuation: CheckedContinuation<Response, Never>) {
        self.continuation = continuation
    }

    func callAsFunction(_ response: Response) {
        guard !replied.exchange(true, ordering: .acquiringAndReleasing) else { return }
        continuation.resume(returning: response)
    }

    func attach(_ task: Task<Void, Never>) {}
}

/// What the HTTP server calls for every complete request, with its raw parts and its id (when the server gives
/// requests ids). `answer` must not block.
/// `Router` parses them into a `Request` (a 400 problem for an invalid target) after asking its shortcut.
public protocol HTTPResponder: Sendable {
    func answer(
        method: HTTPMethod, target: String, headers: HTTPHeaders, body: [UInt8], clientAddress: ClientAddress,
        requestID: RequestID?
    ) -> Answer
}

/// An answer given from a request's raw parts, before the target is parsed and routed, with the template of the
/// route it answers for (for the observer). Called on the server's I/O thread: must not block; `nil` routes the
/// request as usual. For targets a route answered moments ago (a warm cache hit, a read joined): everything the
/// route checks must already be settled by the target itself. A `.later` answer is observed when the server says
/// which response the client got, as a route's is.
public typealias Shortcut = @Sendable (
    _ method: HTTPMethod, _ target: String, _ headers: HTTPHeaders, _ clientAddress: ClientAddress,
    _ requestID: RequestID?
) -> (answer: Answer, route: String)?

/// A route's handler, called on the server's I/O thread with `RequestID.current` bound: must not block. `.now`
/// for what it answers at once (a fresh memory hit), `.later` for the rest (`Later.task` for async work).
public typealias RouteHandler = @Sendable (Request) -> Answer

/// A route's plain async handler (registered through `Later.task`). A thrown `Problem` becomes its response; any
/// other error a 500 problem.
public typealias AsyncHandler = @Sendable (Request) async throws -> Response
