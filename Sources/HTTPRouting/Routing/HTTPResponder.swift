/// How a request is answered: right away on the server's I/O thread, or later by async work.
public enum Dispatch: Sendable {
    case immediate(Response)
    /// `answered` (if any) is called once with the response the client actually got: `work`'s, or the one the
    /// server answered with instead (its deadline's 504, a full queue's or shutdown's 503).
    case deferred(@Sendable () async -> Response, answered: (@Sendable (Response) -> Void)?)
    /// Answered without a task when it can be: the server suspends the request, then calls `start` once, which
    /// either returns false or calls its `reply` once, on any thread (a Redis worker's), with the response, or
    /// with nil. For false and nil, `work` answers as `.deferred`'s does. `answered` as for `.deferred`.
    case callback(
        start: @Sendable (_ reply: @escaping @Sendable (Response?) -> Void) -> Bool,
        work: @Sendable () async -> Response, answered: (@Sendable (Response) -> Void)?)
}

extension Dispatch {
    /// The answer as the server gives it, awaited in a task (a request its gate admitted after waiting, tests):
    /// the immediate one, the callback's reply, or else `work`'s; `answered` is told.
    public func response() async -> Response {
        switch self {
        case .immediate(let response):
            return response
        case .deferred(let work, let answered):
            let response = await work()
            answered?(response)
            return response
        case .callback(let start, let work, let answered):
            let replied = await withCheckedContinuation { (continuation: CheckedContinuation<Response?, Never>) in
                if !start({ continuation.resume(returning: $0) }) { continuation.resume(returning: nil) }
            }
            let response: Response
            if let replied { response = replied } else { response = await work() }
            answered?(response)
            return response
        }
    }
}

/// What the HTTP server calls for every complete request, with its raw parts and its id (when the server gives
/// requests ids). `dispatch` must not block.
/// `Router` parses them into a `Request` (a 400 problem for an invalid target) after asking its shortcut.
public protocol HTTPResponder: Sendable {
    func dispatch(
        method: HTTPMethod, target: String, headers: HTTPHeaders, body: [UInt8], clientAddress: ClientAddress,
        requestID: RequestID?
    ) -> Dispatch
}

/// An answer given from a request's raw method, target and headers, before the target is parsed and routed,
/// with the template of the route it answers for (for the observer). Called on the server's I/O thread: must
/// not block; `nil` routes the request as usual. For answers a route rendered for this exact target moments
/// ago (a warm cache hit): everything the route checks must already be settled by the target itself.
public typealias Shortcut = @Sendable (_ method: HTTPMethod, _ target: String, _ headers: HTTPHeaders)
    -> (response: Response, route: String)?

/// A route's async handler. A thrown `Problem` becomes its response; any other error a 500 problem.
public typealias AsyncHandler = @Sendable (Request) async throws -> Response

/// A route's fast path, called on the server's I/O thread: must not block; `nil` falls back to the async handler.
public typealias ImmediateHandler = @Sendable (Request) -> Response?

/// A route's path without tasks, called on the server's I/O thread after its immediate handler declined: must
/// not block. Returns false to fall back to the async handler at once; else calls `reply` once, on any thread,
/// with the response, or with nil to fall back to the async handler.
public typealias CallbackHandler = @Sendable (Request, _ reply: @escaping @Sendable (Response?) -> Void) -> Bool
