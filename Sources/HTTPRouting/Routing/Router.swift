/// Routes requests by method and `{name}` pattern to handlers; the server's `HTTPResponder`.
///
/// Build it with `on`/`get`/… then hand it to the server; it is an immutable value from then on.
public struct Router: HTTPResponder {
    struct Handlers: Sendable {
        let async: AsyncHandler
        let immediate: ImmediateHandler?
        let callback: CallbackHandler?
    }

    struct Route: Sendable {
        let pattern: RoutePattern
        /// Registration order (also the order of `Allow`); a handful per route, so a scan beats hashing.
        var methods: [HTTPMethod]
        var handlers: [Handlers]

        func handlers(for method: HTTPMethod) -> Handlers? {
            methods.firstIndex(of: method).map { handlers[$0] }
        }
    }

    /// Routes grouped by segment count, most specific first within a group.
    var routesBySegmentCount: [[Route]] = []

    /// Called once per answered request; nil costs nothing.
    public var observer: RequestObserver?

    /// Asked first, before the target is parsed and routed (see `Shortcut`).
    public var shortcut: Shortcut?

    /// Asked before everything, the shortcut included (see `Gate`); nil admits every request.
    public var gate: Gate?

    public init(observer: RequestObserver? = nil) {
        self.observer = observer
    }

    /// Adds a handler for `method` on `pattern` (`/v1/cache/{key}`). GET routes also answer HEAD.
    public mutating func on(
        _ method: HTTPMethod,
        _ pattern: String,
        immediate: ImmediateHandler? = nil,
        callback: CallbackHandler? = nil,
        handler: @escaping AsyncHandler
    ) {
        let parsed = RoutePattern(pattern)
        let count = parsed.components.count
        while routesBySegmentCount.count <= count { routesBySegmentCount.append([]) }
        let handlers = Handlers(async: handler, immediate: immediate, callback: callback)
        if let index = routesBySegmentCount[count].firstIndex(where: { $0.pattern.components == parsed.components }) {
            if let existing = routesBySegmentCount[count][index].methods.firstIndex(of: method) {
                routesBySegmentCount[count][index].handlers[existing] = handlers
            } else {
                routesBySegmentCount[count][index].methods.append(method)
                routesBySegmentCount[count][index].handlers.append(handlers)
            }
            return
        }
        let route = Route(pattern: parsed, methods: [method], handlers: [handlers])
        let position = routesBySegmentCount[count].firstIndex { parsed.isMoreSpecific(than: $0.pattern) }
        routesBySegmentCount[count].insert(route, at: position ?? routesBySegmentCount[count].endIndex)
    }

    public mutating func get(
        _ pattern: String, immediate: ImmediateHandler? = nil, callback: CallbackHandler? = nil,
        handler: @escaping AsyncHandler
    ) {
        on(.get, pattern, immediate: immediate, callback: callback, handler: handler)
    }

    public mutating func head(_ pattern: String, handler: @escaping AsyncHandler) {
        on(.head, pattern, handler: handler)
    }

    public mutating func post(_ pattern: String, handler: @escaping AsyncHandler) {
        on(.post, pattern, handler: handler)
    }

    public mutating func put(_ pattern: String, handler: @escaping AsyncHandler) {
        on(.put, pattern, handler: handler)
    }

    public mutating func delete(_ pattern: String, handler: @escaping AsyncHandler) {
        on(.delete, pattern, handler: handler)
    }

    public mutating func patch(_ pattern: String, handler: @escaping AsyncHandler) {
        on(.patch, pattern, handler: handler)
    }
}
