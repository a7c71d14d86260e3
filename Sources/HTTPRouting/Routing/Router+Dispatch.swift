extension Router {
    /// The gate first, then the shortcut (bodiless requests only), then parsing and routing.
    public func dispatch(
        method: HTTPMethod, target: String, headers: HTTPHeaders, body: [UInt8], clientAddress: ClientAddress,
        requestID: RequestID? = nil
    ) -> Dispatch {
        let start: MonotonicTime? = observer == nil ? nil : .now
        if let gate {
            switch gate(method, target, headers, clientAddress) {
            case .pass: break
            case .answer(let response):
                return .immediate(answer(response, method: method, target: target, id: requestID, headers: headers, route: nil, since: start))
            case .wait(let decide):
                return .deferred({
                    if let denial = await decide() {
                        return answer(denial, method: method, target: target, id: requestID, headers: headers, route: nil, since: start)
                    }
                    return await admittedAfterWaiting(
                        method: method, target: target, headers: headers, body: body, clientAddress: clientAddress,
                        requestID: requestID, since: start)
                }, answered: nil)
            }
        }
        return admitted(
            method: method, target: target, headers: headers, body: body, clientAddress: clientAddress,
            requestID: requestID, since: start)
    }

    /// A request its gate admitted after waiting, answered in the same task.
    private func admittedAfterWaiting(
        method: HTTPMethod, target: String, headers: HTTPHeaders, body: [UInt8], clientAddress: ClientAddress,
        requestID: RequestID?, since start: MonotonicTime?
    ) async -> Response {
        await admitted(
            method: method, target: target, headers: headers, body: body, clientAddress: clientAddress,
            requestID: requestID, since: start
        ).response()
    }

    /// The shortcut (bodiless requests only), then parsing and routing.
    private func admitted(
        method: HTTPMethod, target: String, headers: HTTPHeaders, body: [UInt8], clientAddress: ClientAddress,
        requestID: RequestID?, since start: MonotonicTime?
    ) -> Dispatch {
        if let shortcut, body.isEmpty, let (response, route) = shortcut(method, target, headers) {
            return .immediate(answer(response, method: method, target: target, id: requestID, headers: headers, route: route, since: start))
        }
        do {
            return route(try Request(
                method: method, target: target, headers: headers, body: body, clientAddress: clientAddress,
                id: requestID), since: start)
        } catch {
            return .immediate(answer(error.response, method: method, target: target, id: requestID, headers: headers, route: nil, since: start))
        }
    }

    /// Matches once: 404/405 and immediate-handler answers are `.immediate`, the rest `.deferred`.
    public func dispatch(_ request: consuming Request) -> Dispatch {
        route(request, since: observer == nil ? nil : .now)
    }

    private func route(_ request: consuming Request, since start: MonotonicTime?) -> Dispatch {
        let segments = request.pathSegments
        guard segments.count < routesBySegmentCount.count else {
            return .immediate(answer(Problem.notFound().response, to: request, route: nil, since: start))
        }
        // Routes are ordered most specific first: the first pattern that matches decides, so a literal segment
        // (`/averages/warm`) is never answered by a parameter route (`/averages/{weekday}`) beside it.
        var allowed: [HTTPMethod] = []
        if let route = routesBySegmentCount[segments.count].first(where: { $0.pattern.matches(segments) }) {
            if let handlers = route.handlers(for: request.method)
                ?? (request.method == .head ? route.handlers(for: .get) : nil) {
                request.pathParameters = route.pattern.parameters(segments)
                return dispatch(request, to: handlers, route: route.pattern.template, since: start)
            }
            for method in route.methods where !allowed.contains(method) {
                allowed.append(method)
                if method == .get, !route.methods.contains(.head) { allowed.append(.head) }
            }
        }
        let problem = allowed.isEmpty ? Problem.notFound() : Problem.methodNotAllowed(allowed: allowed)
        return .immediate(answer(problem.response, to: request, route: nil, since: start))
    }

    /// Handlers run with `RequestID.current` bound to the request's id, so that log lines written on their
    /// behalf (and by tasks they start) carry it.
    private func dispatch(_ request: consuming Request, to handlers: Handlers, route: String, since start: MonotonicTime?) -> Dispatch {
        if let immediate = handlers.immediate,
            let response = Self.withID(request.id, { [request = copy request] in immediate(request) }) {
            return .immediate(answer(response, to: request, route: route, since: start))
        }
        let handler = handlers.async
        let request = copy request
        // Observed when the server says which answer the client got (a handler past its deadline is not it).
        var answered: (@Sendable (Response) -> Void)?
        if let observer, let start {
            answered = { response in observer(Router.record(response, for: request, route: route, since: start)) }
        }
        let work: @Sendable () async -> Response = {
            do {
                return try await RequestID.$current.withValue(request.id) { try await handler(request) }
            } catch let problem as Problem {
                return problem.response
            } catch is CancellationError {
                return Problem.gatewayTimeout(detail: "The request was not handled in time.").response
            } catch {
                return Problem.internalError().response
            }
        }
        guard let callback = handlers.callback else { return .deferred(work, answered: answered) }
        return .callback(start: { reply in callback(request, reply) }, work: work, answered: answered)
    }

    private static func withID<T>(_ id: RequestID?, _ body: () -> T) -> T {
        guard let id else { return body() }
        return RequestID.$current.withValue(id, operation: body)
    }

    private func answer(_ response: Response, to request: Request, route: String?, since start: MonotonicTime?) -> Response {
        answer(
            response, method: request.method, target: request.target, id: request.id, headers: request.headers, route: route,
            since: start)
    }

    private func answer(
        _ response: Response, method: HTTPMethod, target: String, id: RequestID?, headers: HTTPHeaders, route: String?,
        since start: MonotonicTime?
    ) -> Response {
        if let observer, let start {
            observer(Router.record(response, method: method, target: target, id: id, headers: headers, route: route, since: start))
        }
        return response
    }

    private static func record(_ response: Response, for request: Request, route: String?, since start: MonotonicTime) -> RequestRecord {
        record(
            response, method: request.method, target: request.target, id: request.id, headers: request.headers, route: route,
            since: start)
    }

    private static func record(
        _ response: Response, method: HTTPMethod, target: String, id: RequestID?, headers: HTTPHeaders, route: String?,
        since start: MonotonicTime
    ) -> RequestRecord {
        RequestRecord(
            method: method,
            target: target,
            requestID: id,
            requestHeaders: headers,
            route: route,
            status: response.status,
            bodyBytes: response.body.count,
            duration: start.elapsed,
            responseHeaders: response.headers
        )
    }
}
