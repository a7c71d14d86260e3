/// How a request is answered: right away on the server's I/O thread, or later by async work.
public enum Dispatch: Sendable {
    case immediate(Response)
    case deferred(@Sendable () async -> Response)
}

/// What the HTTP server calls for every complete request. `dispatch` must not block.
public protocol HTTPResponder: Sendable {
    func dispatch(_ request: consuming Request) -> Dispatch
}

/// A route's async handler. A thrown `Problem` becomes its response; any other error a 500 problem.
public typealias AsyncHandler = @Sendable (Request) async throws -> Response

/// A route's fast path, called on the server's I/O thread: must not block; `nil` falls back to the async handler.
public typealias ImmediateHandler = @Sendable (Request) -> Response?
