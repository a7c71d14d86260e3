/// Routes requests by method and `{name}` pattern to handlers; the server's `HTTPResponder`.
///
/// Build it with `on`/`get`/… then hand it to the server; it is an immutable value from then on.
public struct Router: HTTPResponder {
    struct Route: Sendable {
        let pattern: RoutePattern
        /// Registration order (also the order of `Allow`); a handful per route, so a scan beats hashing.
        var methods: [HTTPMethod]
        var handlers: [RouteHandler]

        func handler(for method: HTTPMethod) -> RouteHandler? {
            methods.firstIndex(of: method).map { handlers[$0] }
        }
    }

    /// Routes grouped by segment count, most specific first within a group.
    var routesBySegmentCount: [[Route]] = []

    /// Called once per answered request; nil costs nothing.
    public var observer: RequestObserver?

    /// Asked first, before the target is parsed and routed (see `Shortcut`).
    public var shortcut: Shortcut?

    /// Asked before everything, the shortcut included (see `AccessCheck`); nil admits every request.
    public var accessCheck: AccessCheck?

    public init(observer: RequestObserver? = nil) {
        self.observer = observer
    }

    /// Adds `handler` for `method` on `pattern` (`/v1/cache/{key}`): it answers `.now` or `.later`. GET routes
    /// also answer HEAD.
    public mutating func handle(_ method: HTTPMethod, _ pattern: String, _ handler: @escaping RouteHandler) {
        let parsed = RoutePattern(pattern)
        let count = parsed.components.count
        while routesBySegmentCount.count <= count { routesBySegmentCount.append([]) }
        if let index = routesBySegmentCount[count].firstIndex(where: { $0.pattern.components == parsed.components }) {
            if let existing = routesBySegmentCount[count][index].methods.firstIndex(of: method) {
                routesBySegmentCount[count][index].handlers[existing] = handler
            } else {
                routesBySegmentCount[count][index].methods.append(method)
                routesBySegmentCount[count][index].handlers.append(handler)
            }
            return
        }
        let route = Route(pattern: parsed, methods: [method], handlers: [handler])
        let position = routesBySegmentCount[count].firstIndex { parsed.isMoreSpecific(than: $0.pattern) }
        routesBySegmentCount[count].insert(route, at: position ?? routesBySegmentCount[count].endIndex)
    }

    /// Adds a plain async handler for `method` on `pattern`, answered `.later` in a task (`Later.task`).
    public mutating func on(_ method: HTTPMethod, _ pattern: String, handler: @escaping AsyncHandler) {
        handle(method, pattern) { request in .later(.task(id: request.id) { try await handler(request) }) }
    }

    public mutating func get(_ pattern: String, handler: @escaping AsyncHandler) {
        on(.get, pattern, handler: handler)
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
}
