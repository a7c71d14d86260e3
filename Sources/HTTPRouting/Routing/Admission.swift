/// What a router's access check says about a request before anything else looks at it (its shortcut included).
public enum Admission: Sendable {
    /// Route it as usual.
    case pass
    /// Answer this instead (a denial); the request reaches no handler.
    case answer(Response)
    /// Decide after some async work (a key set fetched again): a response denies, `nil` routes it as usual.
    case wait(@Sendable () async -> Response?)
}

/// Asked first for every request with its raw method, target, headers and peer, on the server's I/O thread:
/// must not block (CPU work such as one signature check is fine; waiting is `.wait`).
public typealias AccessCheck = @Sendable (
    _ method: HTTPMethod, _ target: String, _ headers: HTTPHeaders, _ clientAddress: ClientAddress
) -> Admission
