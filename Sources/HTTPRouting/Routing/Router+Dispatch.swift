extension Router {
    /// The shortcut first (bodiless requests only), then parsing and routing.
    public func dispatch(
        method: HTTPMethod, target: String, headers: HTTPHeaders, body: [UInt8], clientAddress: ClientAddress
    ) -> Dispatch {
        if let shortcut, body.isEmpty {
            let start: ContinuousClock.Instant? = observer == nil ? nil : .now
            if let (response, route) = shortcut(method, target, headers) {
                if let observer, let start {
                    observer(Router.record(response, method: method, target: target, route: route, since: start))
                }
                return .immediate(response)
            }
        }
        do {
            return dispatch(try Request(
                method: method, target: target, headers: headers, body: body, clientAddress: clientAddress))
        } catch {
            return .immediate(answer(error.response, method: method, target: target, route: nil, since: observer == nil ? nil : .now))
        }
    }

    /// Matches once: 404/405 and immediate-handler answers are `.immediate`, the rest `.deferred`.
    public func dispatch(_ request: consuming Request) -> Dispatch {
        let start: ContinuousClock.Instant? = observer == nil ? nil : .now
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

    private func dispatch(_ request: consuming Request, to handlers: Handlers, route: String, since start: ContinuousClock.Instant?) -> Dispatch {
        if let immediate = handlers.immediate, let response = immediate(request) {
            return .immediate(answer(response, to: request, route: route, since: start))
        }
        let handler = handlers.async
        let observer = self.observer
        let request = copy request
        return .deferred {
            let response: Response
            do {
                response = try await handler(request)
            } catch let problem as Problem {
                response = problem.response
            } catch is CancellationError {
                response = Problem.gatewayTimeout(detail: "The request was not handled in time.").response
            } catch {
                response = Problem.internalError().response
            }
            if let observer, let start {
                observer(Router.record(response, for: request, route: route, since: start))
            }
            return response
        }
    }

    private func answer(_ response: Response, to request: Request, route: String?, since start: ContinuousClock.Instant?) -> Response {
        answer(response, method: request.method, target: request.target, route: route, since: start)
    }

    private func answer(
        _ response: Response, method: HTTPMethod, target: String, route: String?, since start: ContinuousClock.Instant?
    ) -> Response {
        if let observer, let start {
            observer(Router.record(response, method: method, target: target, route: route, since: start))
        }
        return response
    }

    private static func record(_ response: Response, for request: Request, route: String?, since start: ContinuousClock.Instant) -> RequestRecord {
        record(response, method: request.method, target: request.target, route: route, since: start)
    }

    private static func record(
        _ response: Response, method: HTTPMethod, target: String, route: String?, since start: ContinuousClock.Instant
    ) -> RequestRecord {
        RequestRecord(
            method: method,
            target: target,
            route: route,
            status: response.status,
            bodyBytes: response.body.count,
            duration: ContinuousClock.now - start,
            responseHeaders: response.headers
        )
    }
}
