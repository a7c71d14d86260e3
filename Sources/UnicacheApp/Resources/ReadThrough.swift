import Clocks
import Foundation
import HTTPRouting
import Settings
import UnifiedCache
import UpstreamGate

/// Serves the read-through resources: validation → key and policy → cache (→ fetcher) → headers. A class: the
/// closures that answer later hold it by one reference.
final class ReadThrough: Sendable {
    let cache: UnifiedCacheManager
    let fetchers: FetcherSet
    let clock: any WallClock
    let ttl: TTLTable
    /// Whether the upstream of a namespace refuses a fetch at once (then a stale memory copy answers here too); nil
    /// without gates. Made once: a closure made per read was an allocation on the warm path.
    private let refusal: (@Sendable (_ namespace: String) -> UpstreamRefusal?)?
    /// Each domain's gate (counts the refreshes `--refresh-interval` answered from a copy); nil without gates.
    private let gates: UpstreamGates?
    /// Answers to plain requests, rendered once a second per target.
    let answers = RenderedAnswers()

    /// `gates`: each domain's upstream gate, asked by `refusal`.
    init(cache: UnifiedCacheManager, fetchers: FetcherSet, clock: any WallClock, ttl: TTLTable, gates: UpstreamGates?) {
        self.cache = cache
        self.fetchers = fetchers
        self.clock = clock
        self.ttl = ttl
        self.gates = gates
        if let gates {
            refusal = { namespace in Self.domains[namespace].flatMap { gates[$0].refusesAtOnce() } }
        } else {
            refusal = nil
        }
    }

    /// The domain of each read-through namespace.
    private static let domains = Dictionary(
        ResourceTable.rows.map { ($0.namespace, $0.domain) }, uniquingKeysWith: { first, _ in first })

    /// The route's handler, on the server's I/O thread, in one of three ways: now (the cache's `look` is ready: a
    /// fresh hit, or a stale copy while its upstream refuses at once); later, joining what is under way (a load of the
    /// key in flight, or the shared tier asked: a stampede's coalesced requests make no task each); later, as a task
    /// (`handle`, which also renders every error). Only a plain request joins; a conditional one (If-None-Match) is
    /// rendered per request. The target is resolved (validated) once, here, and handed on. (A plain request for a
    /// target answered this second took the router's `shortcut` before it got here, unless nothing was cached or
    /// under way for it.)
    func answer(_ resource: Resource, _ request: Request) -> Answer {
        let plain = RenderedAnswers.isPlain(request)
        let now = clock.now()
        let resolution = self.resolution(resource, request)
        guard case .success(let resolved) = resolution, request.headers["Cache-Control"] == nil,
            !request.query.contains("refresh")
        else { return .later(task(resource, request, resolution)) }
        switch cache.look(resolved.fetch, policy: resolved.policy, now: now, refusal: refusal, joining: plain) {
        case .ready(let result):
            return .now(plain ? answer(result, to: request, on: resource, resolved: resolved)
                : CacheHeaders.response(for: result, request: request))
        case .pending(let read):
            let joined = Joined(self, resource, request, resolved, read)
            return .later(Later { reply in joined.start(reply) })
        case .absent:
            return .later(task(resource, request, resolution))
        }
    }

    /// The router's shortcut: a plain request for a target answered earlier this second, read without parsing or
    /// routing (its memo says what the target resolves to): answered now from memory or the second tier, or later
    /// joining a load in flight or the shared tier (`JoinedShortcut`); nil when nothing is cached or under way
    /// (then it is routed, and the cache, which counted nothing, is asked again).
    func shortcut(
        _ method: HTTPMethod, _ target: String, _ headers: HTTPHeaders, _ clientAddress: ClientAddress,
        _ requestID: RequestID?
    ) -> (answer: Answer, route: String)? {
        let now = clock.now()
        guard let memo = answers.remembered(method: method, target: target, headers: headers, now: now) else {
            return nil
        }
        let again = answers.rememberedAnswer(memo, now: now) { rendered in
            cache.lookAgain(rendered.result, policy: memo.resolved.policy, now: now)
        }
        if let again { return (.now(again), memo.route) }
        switch memo.look({ cache.look($0, policy: $1, now: now, refusal: refusal, joining: true) }) {
        case .ready(let result):
            // The hit is counted now: answered here, never by routing again.
            return (.now(answers.answer(result, memo: memo, target: target, now: now)), memo.route)
        case .pending(let read):
            let joined = JoinedShortcut(
                self, memo,
                Unparsed(method: method, target: target, headers: headers, clientAddress: clientAddress, id: requestID),
                read)
            return (.later(Later { reply in joined.start(reply) }), memo.route)
        case .absent:
            return nil
        }
    }

    /// A request that joined a load or the shared tier, answered when the read is done. One object, so that the
    /// closures that carry it to the thread the read ends on retain one reference: capturing the request, the
    /// resource and the resolution themselves copied them field by field into every closure's context (~60 retains
    /// and as many releases per shared hit). It holds the read and, once started, the reply too, so that its `Later`
    /// and the read's callback capture it alone: a closure of one reference needs no context of its own (two
    /// allocations fewer a request, made on the polling thread and freed on the Redis worker).
    ///
    /// `@unchecked Sendable`: `reply` is written once, by `start`, before the read is asked, and read only by the
    /// read's callback, which the asking orders after it (the same thread, or a lock and a queue in between).
    private final class Joined: @unchecked Sendable {
        let readThrough: ReadThrough
        let resource: Resource
        let request: Request
        let resolved: ResolvedResource
        let read: PendingRead
        private var reply: (any Reply)?

        init(
            _ readThrough: ReadThrough, _ resource: Resource, _ request: Request, _ resolved: ResolvedResource,
            _ read: PendingRead
        ) {
            self.readThrough = readThrough
            self.resource = resource
            self.request = request
            self.resolved = resolved
            self.read = read
        }

        /// The `Later`'s start: the read's result goes to `reply`.
        func start(_ reply: any Reply) {
            self.reply = reply
            read.whenDone { [self] result in
                if let reply = self.reply { answer(result, reply) }
            }
        }

        /// The read's result as the reply: its answer, its problem, or (nothing ready) the request as a task.
        func answer(_ result: Result<CacheResult, CacheError>?, _ reply: any Reply) {
            switch result {
            case .success(let result)?:
                reply(readThrough.answer(result, to: request, on: resource, resolved: resolved))
            case .failure(let error)?:
                reply(ReadThrough.problem(for: error).response)
            case nil:
                readThrough.task(resource, request, .success(resolved)).start(reply)
            }
        }
    }

    /// A request as the server gave it, before its target is parsed.
    private struct Unparsed: Sendable {
        let method: HTTPMethod
        let target: String
        let headers: HTTPHeaders
        let clientAddress: ClientAddress
        let id: RequestID?

        func parsed() throws(Problem) -> Request {
            try Request(method: method, target: target, headers: headers, clientAddress: clientAddress, id: id)
        }
    }

    /// As `Joined`, for a request the shortcut joined before parsing it: answered from its target's memo. When the
    /// read comes back empty, the request is parsed (its target parsed this second already) and answered as a task
    /// with the memo's resolution, as a routed request is; its own id goes with the fetch.
    ///
    /// `@unchecked Sendable`: `reply` as `Joined`'s.
    private final class JoinedShortcut: @unchecked Sendable {
        let readThrough: ReadThrough
        let memo: RenderedAnswers.Memo
        let request: Unparsed
        let read: PendingRead
        private var reply: (any Reply)?

        init(_ readThrough: ReadThrough, _ memo: RenderedAnswers.Memo, _ request: Unparsed, _ read: PendingRead) {
            (self.readThrough, self.memo, self.request, self.read) = (readThrough, memo, request, read)
        }

        /// The `Later`'s start, as `Joined`'s.
        func start(_ reply: any Reply) {
            self.reply = reply
            read.whenDone { [self] result in
                if let reply = self.reply { answer(result, reply) }
            }
        }

        func answer(_ result: Result<CacheResult, CacheError>?, _ reply: any Reply) {
            switch result {
            case .success(let result)?:
                let now = readThrough.clock.now()
                reply(readThrough.answers.answer(result, memo: memo, target: request.target, now: now))
            case .failure(let error)?:
                reply(ReadThrough.problem(for: error).response)
            case nil:
                do throws(Problem) {
                    var resolved = memo.resolved
                    resolved.fetch.requestID = request.id?.value
                    readThrough.task(memo.resource, try request.parsed(), .success(resolved)).start(reply)
                } catch {
                    reply(error.response)
                }
            }
        }
    }

    /// The request answered later by a task of its own (`handle`), with its resolution made already. Made only on the
    /// ways that need it: a ready answer pays for no closure.
    private func task(_ resource: Resource, _ request: Request, _ resolution: Result<ResolvedResource, Problem>)
        -> Later
    {
        .task(id: request.id) { [self] in try await handle(resource, request, resolved: resolution) }
    }

    /// A plain read's answer, remembered for the rest of the second its resolution was made in.
    private func answer(_ result: CacheResult, to request: Request, on resource: Resource, resolved: ResolvedResource)
        -> Response
    {
        answers.answer(result, to: request, on: resource, resolved: resolved, now: clock.now())
    }

    /// `resolve` as a value, handed on from the I/O thread to the work that answers later.
    private func resolution(_ resource: Resource, _ request: Request) -> Result<ResolvedResource, Problem> {
        do throws(Problem) {
            return .success(try resolve(resource, request))
        } catch {
            return .failure(error)
        }
    }

    /// `resolved`: the target's resolution when `answer` made it already.
    func handle(
        _ resource: Resource, _ request: Request, resolved resolution: Result<ResolvedResource, Problem>? = nil
    ) async throws(Problem) -> Response {
        let resolved: ResolvedResource
        if let resolution { resolved = Self.traced(try resolution.get(), request) } else {
            resolved = Self.traced(try resolve(resource, request), request)
        }
        let control = try Self.control(request)
        let result = try await get(resolved, domain: resource.domain, control: control)
        // A plain request's control is `.normal` (no Cache-Control, no ?refresh): its answer may be remembered.
        guard RenderedAnswers.isPlain(request) else { return CacheHeaders.response(for: result, request: request) }
        return answer(result, to: request, on: resource, resolved: resolved)
    }

    /// `resolved` with the request's trace context headers, for the fetch it may cause: read here, on the way to the
    /// cache's load path, not on the immediate (fresh hit) path; parsed only when a fetch is sent.
    static func traced(_ resolved: ResolvedResource, _ request: Request) -> ResolvedResource {
        guard let traceparent = request.headers[TraceParent.headerName] else { return resolved }
        var traced = resolved
        traced.fetch.traceparent = traceparent
        // Several `tracestate` fields are one list (W3C Trace Context): joined, then validated as one when sent.
        let states = request.headers.values(for: TraceParent.stateHeaderName)
        traced.fetch.tracestate = states.isEmpty ? nil : states.joined(separator: ",")
        return traced
    }

    /// One cache read with the contract's error mapping.
    func get(_ resolved: ResolvedResource, domain: UpstreamDomain, control: RequestControl) async throws(Problem)
        -> CacheResult
    {
        do {
            let result = try await cache.get(
                resolved.fetch, policy: resolved.policy, fetcher: fetchers[domain], control: control)
            if result.refreshThrottled { gates?[domain].recordRefreshThrottled() }
            return result
        } catch {
            throw Self.problem(for: error)
        }
    }

    /// `get` as a value, for reads that run side by side (`async let` does not keep typed throws).
    func result(_ resolved: ResolvedResource, domain: UpstreamDomain, control: RequestControl) async
        -> Result<CacheResult, Problem>
    {
        do throws(Problem) {
            return .success(try await get(resolved, domain: domain, control: control))
        } catch {
            return .failure(error)
        }
    }

    func resolve(_ resource: Resource, _ request: Request) throws(Problem) -> ResolvedResource {
        try resolve(request) { c throws(InputError) in try resource.resolve(c) }
    }

    /// Validates the user and runs `body` with the request's context; input errors become 400 problems.
    func resolve<T>(_ request: Request, _ body: (ResourceContext) throws(InputError) -> T) throws(Problem) -> T {
        do {
            let user = try InputValidation.user(request.pathParameters["user"] ?? "")
            return try body(ResourceContext(user: user, request: request, now: clock.now(), ttl: ttl))
        } catch {
            throw Problem.invalidInput(error)
        }
    }

    static func control(_ request: Request) throws(Problem) -> RequestControl {
        do { return try RequestControls.control(for: request) } catch { throw Problem.invalidInput(error) }
    }

    static func problem(for error: CacheError) -> Problem {
        switch error {
        case .notFound(let outcome, let tier, let stored):
            // Answered as a resource is: how this request had it (a remembered 404 is a hit), and from where.
            var problem = Problem.notFound(
                detail: "The upstream has no such resource.", type: Problem.typeURI("upstream-not-found"))
            problem.headers.add(name: "X-Cache", value: CacheHeaders.xCache(outcome))
            let status = CacheHeaders.cacheStatus(outcome, stored: stored, tier: tier)
            problem.headers.add(name: "Cache-Status", value: status)
            if let tier { problem.headers.add(name: "X-Cache-Tier", value: tier.rawValue) }
            return problem
        case .rateLimited(let retryAfter):
            return Problem.serviceUnavailable(
                detail: "The upstream is rate limiting requests and no stored copy is available.",
                retryAfterSeconds: max(1, retryAfter ?? 30), type: Problem.typeURI("upstream-rate-limited"))
        case .upstreamFailed(.invalidRequest):
            return Problem.badGateway(
                detail: "The request to the upstream could not be sent as built; the upstream was not asked "
                    + "and no stored copy is available.",
                type: Problem.typeURI("upstream-request-invalid"))
        case .upstreamFailed(let cause):
            return Problem.badGateway(detail: "The upstream failed (\(describe(cause))) and no stored copy is available.")
        case .notCached:
            return Problem.gatewayTimeout(
                detail: "only-if-cached was requested and no servable copy is stored.",
                type: Problem.typeURI("not-cached"))
        case .refused(let refusal):
            return problem(for: refusal)
        }
    }

    /// CONTRACT §7: a spent budget or a 429 pause is 503 with the wait; an open circuit is 502, answered at once;
    /// §15.2: a user's spent share is 429 with the wait, for that user only. Each says why in `Cache-Status`.
    static func problem(for refusal: UpstreamRefusal) -> Problem {
        var problem = refusalProblem(refusal)
        problem.headers.add(name: "Cache-Status", value: CacheHeaders.refusalStatus(refusal.reason))
        return problem
    }

    private static func refusalProblem(_ refusal: UpstreamRefusal) -> Problem {
        switch refusal.reason {
        case .user:
            var headers = HTTPHeaders()
            headers.add(name: "Retry-After", value: String(max(1, refusal.retryAfterSeconds)))
            return Problem(
                type: Problem.typeURI("user-budget-spent"), status: 429,
                detail: "This user's share of the upstream's request budget is spent and no stored copy is available.",
                headers: headers)
        case .rate:
            return Problem.serviceUnavailable(
                detail: "The upstream's request budget is spent and no stored copy is available.",
                retryAfterSeconds: max(1, refusal.retryAfterSeconds), type: Problem.typeURI("upstream-budget-spent"))
        case .paused:
            return Problem.serviceUnavailable(
                detail: "The upstream asked for a pause (429) and no stored copy is available.",
                retryAfterSeconds: max(1, refusal.retryAfterSeconds), type: Problem.typeURI("upstream-rate-limited"))
        case .circuit:
            return Problem.badGateway(
                detail: "The upstream is failing (its circuit is open) and no stored copy is available.")
        }
    }

    private static func describe(_ error: FetchError) -> String {
        switch error {
        case .notFound: return "not found"
        case .rateLimited: return "rate limited"
        case .unavailable(let reason), .unreachable(let reason), .invalidRequest(let reason): return reason
        case .timeout: return "timeout"
        case .refused(let refusal): return "refused: \(refusal.reason.rawValue)"
        }
    }
}

extension Problem {
    static func invalidInput(_ error: InputError) -> Problem {
        Problem.badRequest(
            detail: error.detail, type: Problem.typeURI("invalid-parameter"),
            members: [Member("parameter", .string(error.parameter))])
    }
}
