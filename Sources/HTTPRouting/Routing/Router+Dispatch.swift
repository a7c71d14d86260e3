extension Router {
    /// The access check first, then the shortcut (bodiless requests only), then parsing and routing.
    public func answer(
        method: HTTPMethod, target: String, headers: HTTPHeaders, body: [UInt8], clientAddress: ClientAddress,
        requestID: RequestID? = nil
    ) -> Answer {
        let start: MonotonicTime? = observer == nil ? nil : .now
        if let accessCheck {
            switch accessCheck(method, target, headers, clientAddress) {
            case .pass: break
            case .answer(let response):
                return .now(observed(response, method: method, target: target, id: requestID, headers: headers, route: nil, since: start))
            case .wait(let decide):
                // Observed with the answer its routing gives (as a request admitted at once), not the server's.
                return .later(Later { reply in
                    Later.inTask(reply, id: requestID) {
                        if let denial = await decide() {
                            return reply(observed(denial, method: method, target: target, id: requestID, headers: headers, route: nil, since: start))
                        }
                        switch admitted(
                            method: method, target: target, headers: headers, body: body, clientAddress: clientAddress,
                            requestID: requestID, since: start) {
                        case .now(let response):
                            reply(response)
                        case .later(let later):
                            later.start(ObservedReply(reply: reply, answered: later.answered))
                        }
                    }
                })
            }
        }
        return admitted(
            method: method, target: target, headers: headers, body: body, clientAddress: clientAddress,
            requestID: requestID, since: start)
    }

    /// The shortcut (bodiless requests only), then parsing and routing.
    private func admitted(
        method: HTTPMethod, target: String, headers: HTTPHeaders, body: [UInt8], clientAddress: ClientAddress,
        requestID: RequestID?, since start: MonotonicTime?
    ) -> Answer {
        if let shortcut, body.isEmpty, let (answer, route) = shortcut(method, target, headers, clientAddress, requestID) {
            return observed(answer, method: method, target: target, id: requestID, headers: headers, route: route, since: start)
        }
        do {
            return route(try Request(
                method: method, target: target, headers: headers, body: body, clientAddress: clientAddress,
                id: requestID), since: start)
        } catch {
            return .now(observed(error.response, method: method, target: target, id: requestID, headers: headers, route: nil, since: start))
        }
    }

    /// Matches once: 404/405 are `.now`, the rest is the route handler's answer.
    public func answer(_ request: consuming Request) -> Answer {
        route(request, since: observer == nil ? nil : .now)
    }

    private func route(_ request: consuming Request, since start: MonotonicTime?) -> Answer {
        let segments = request.pathSegments
        guard segments.count < routesBySegmentCount.count else {
            return .now(observed(Problem.notFound().response, to: request, route: nil, since: start))
        }
        // Routes are ordered most specific first: the first pattern that matches decides, so a literal segment
        // (`/averages/warm`) is never answered by a parameter route (`/averages/{weekday}`) beside it.
        var allowed: [HTTPMethod] = []
        if let route = routesBySegmentCount[segments.count].first(where: { $0.pattern.matches(segments) }) {
            if let handler = route.handler(for: request.method)
                ?? (request.method == .head ? route.handler(for: .get) : nil) {
                request.pathParameters = route.pattern.parameters(segments)
                return answer(request, with: handler, route: route.pattern.template, since: start)
            }
            for method in route.methods where !allowed.contains(method) {
                allowed.append(method)
                if method == .get, !route.methods.contains(.head) { allowed.append(.head) }
            }
        }
        let problem = allowed.isEmpty ? Problem.notFound() : Problem.methodNotAllowed(allowed: allowed)
        return .now(observed(problem.response, to: request, route: nil, since: start))
    }

    /// Handlers run with `RequestID.current` bound to the request's id, so that log lines written on their
    /// behalf carry it (tasks `Later.task` makes bind it too).
    private func answer(_ request: consuming Request, with handler: RouteHandler, route: String, since start: MonotonicTime?) -> Answer {
        let request = copy request
        return observed(
            Self.withID(request.id, { handler(request) }), method: request.method, target: request.target, id: request.id,
            headers: request.headers, route: route, since: start)
    }

    /// `answer` observed as answered on `route`: `.now` at once, `.later` when the server says which response the
    /// client got (a handler past its deadline is not it).
    private func observed(
        _ answer: Answer, method: HTTPMethod, target: String, id: RequestID?, headers: HTTPHeaders, route: String,
        since start: MonotonicTime?
    ) -> Answer {
        switch answer {
        case .now(let response):
            return .now(observed(response, method: method, target: target, id: id, headers: headers, route: route, since: start))
        case .later(var later):
            if let observer, let start {
                later.answered = { response in
                    observer(Router.record(response, method: method, target: target, id: id, headers: headers, route: route, since: start))
                }
            }
            return .later(later)
        }
    }

    private static func withID<T>(_ id: RequestID?, _ body: () -> T) -> T {
        guard let id else { return body() }
        return RequestID.$current.withValue(id, operation: body)
    }

    private func observed(_ response: Response, to request: Request, route: String?, since start: MonotonicTime?) -> Response {
        observed(
            response, method: request.method, target: request.target, id: request.id, headers: request.headers, route: route,
            since: start)
    }

    private func observed(
        _ response: Response, method: HTTPMethod, target: String, id: RequestID?, headers: HTTPHeaders, route: String?,
        since start: MonotonicTime?
    ) -> Response {
        if let observer, let start {
            observer(Router.record(response, method: method, target: target, id: id, headers: headers, route: route, since: start))
        }
        return response
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

/// A reply that tells `answered` first (a route's observation, after an access check that waited).
private struct ObservedReply: Reply {
    let reply: any Reply
    let answered: (@Sendable (Response) -> Void)?

    func callAsFunction(_ response: Response) {
        answered?(response)
        reply(response)
    }

    func attach(_ task: Task<Void, Never>) { reply.attach(task) }
}
