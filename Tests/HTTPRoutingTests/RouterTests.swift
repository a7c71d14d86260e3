import Dispatch
import Synchronization
import Testing
@testable import HTTPRouting

/// Resolves an answer into its response, telling whether it was given now.
func resolve(_ answer: Answer) async -> (response: Response, immediate: Bool) {
    if case .now(let response) = answer { return (response, true) }
    return (await answer.response(), false)
}

func send(_ router: Router, _ method: HTTPMethod, _ target: String) async throws -> (response: Response, immediate: Bool) {
    await resolve(router.answer(try Request(method: method, target: target)))
}

func bodyText(_ response: Response) -> String {
    String(decoding: response.body, as: UTF8.self)
}

struct Boom: Error {}

@Suite(.timeLimit(.minutes(10))) struct RouterTests {
    static func makeRouter() -> Router {
        var router = Router()
        router.get("/v1/users/{user}/health/averages/{weekday}") { request in
            .text("avg \(request.pathParameters["user"] ?? "-") \(request.pathParameters["weekday"] ?? "-")")
        }
        router.get("/v1/cache/{key}") { request in .text("get \(request.pathParameters["key"] ?? "-")") }
        router.put("/v1/cache/{key}") { _ in Response(status: 201) }
        router.delete("/v1/cache/{key}") { _ in Response(status: 204) }
        router.get("/v1/cache/stats") { _ in .text("stats") }
        router.handle(.get, "/healthz") { _ in .now(.json(#"{"status":"ok"}"#)) }
        router.handle(.get, "/maybe") { request in
            request.query.contains("fast") ? .now(.text("fast")) : .later(.task(id: request.id) { .text("slow") })
        }
        router.get("/problem") { _ in throw Problem.badRequest(detail: "days must be 1-90") }
        router.get("/boom") { _ in throw Boom() }
        router.get("/cancelled") { _ in throw CancellationError() }
        router.post("/v1/users/{user}/events") { request in .text("event \(request.body.count)") }
        return router
    }

    @Test func extractsDecodedPathParameters() async throws {
        let router = Self.makeRouter()
        let (response, immediate) = try await send(router, .get, "/v1/users/alice/health/averages/3")
        #expect(bodyText(response) == "avg alice 3")
        #expect(!immediate)
        let key = try await send(router, .get, "/v1/cache/a%2Fb%00c")
        #expect(bodyText(key.response) == "get a/b\u{0}c")
    }

    @Test func literalRouteWinsOverParameterRoute() async throws {
        let router = Self.makeRouter()
        #expect(bodyText(try await send(router, .get, "/v1/cache/stats").response) == "stats")
        #expect(bodyText(try await send(router, .get, "/v1/cache/other").response) == "get other")
    }

    @Test func literalRouteWinsRegardlessOfRegistrationOrder() async throws {
        var router = Router()
        router.get("/a/{x}") { _ in .text("param") }
        router.get("/a/b") { _ in .text("literal") }
        #expect(bodyText(try await send(router, .get, "/a/b").response) == "literal")
        #expect(bodyText(try await send(router, .get, "/a/c").response) == "param")
    }

    @Test(arguments: ["/nope", "/v1/cache", "/v1/cache/a/b", "/", "/healthz/", "/v1/users/alice/health/averages"])
    func unknownPathIsAnImmediate404Problem(target: String) async throws {
        let (response, immediate) = try await send(Self.makeRouter(), .get, target)
        #expect(immediate)
        #expect(response.status == 404)
        #expect(response.headers["Content-Type"] == "application/problem+json")
        #expect(bodyText(response).contains(#""status":404"#))
    }

    @Test func otherMethodIs405WithAllowListingHead() async throws {
        let (response, immediate) = try await send(Self.makeRouter(), .post, "/v1/cache/k")
        #expect(immediate)
        #expect(response.status == 405)
        #expect(response.headers["Allow"] == "GET, HEAD, PUT, DELETE")
        #expect(response.headers["Content-Type"] == "application/problem+json")
    }

    /// The most specific matching pattern decides: `/v1/cache/stats` is answered by its literal route only,
    /// never by `/v1/cache/{key}` beside it (so a POST-only `/averages/warm` is not a GET of `/averages/{weekday}`).
    @Test func allowNamesTheMostSpecificPatternsMethods() async throws {
        let (response, _) = try await send(Self.makeRouter(), .patch, "/v1/cache/stats")
        #expect(response.status == 405)
        #expect(response.headers["Allow"] == "GET, HEAD")
        let (put, _) = try await send(Self.makeRouter(), .put, "/v1/cache/stats")
        #expect(put.status == 405)
    }

    @Test func postOnlyRouteDoesNotListHead() async throws {
        let (response, _) = try await send(Self.makeRouter(), .get, "/v1/users/alice/events")
        #expect(response.headers["Allow"] == "POST")
    }

    @Test func headIsAnsweredByTheGetRoute() async throws {
        let (response, _) = try await send(Self.makeRouter(), .head, "/v1/cache/k")
        #expect(response.status == 200)
        #expect(bodyText(response) == "get k")
    }

    @Test func explicitHeadRouteWinsOverGet() async throws {
        var router = Router()
        router.get("/x") { _ in .text("get") }
        router.on(.head, "/x") { _ in Response(status: 204) }
        #expect(try await send(router, .head, "/x").response.status == 204)
    }

    @Test func immediateHandlerAnswersWithoutAsyncWork() async throws {
        let router = Self.makeRouter()
        let (response, immediate) = try await send(router, .get, "/healthz")
        #expect(immediate)
        #expect(bodyText(response) == #"{"status":"ok"}"#)
        #expect(response.headers["Content-Type"] == "application/json")
    }

    @Test func immediateHandlerReturningNilFallsBackToAsync() async throws {
        let router = Self.makeRouter()
        let fast = try await send(router, .get, "/maybe?fast")
        #expect(fast.immediate && bodyText(fast.response) == "fast")
        let slow = try await send(router, .get, "/maybe")
        #expect(!slow.immediate && bodyText(slow.response) == "slow")
    }

    @Test func thrownProblemBecomesItsResponse() async throws {
        let (response, _) = try await send(Self.makeRouter(), .get, "/problem")
        #expect(response.status == 400)
        #expect(bodyText(response).contains("days must be 1-90"))
    }

    @Test func otherErrorsBecomeA500WithoutInternals() async throws {
        let (response, _) = try await send(Self.makeRouter(), .get, "/boom")
        #expect(response.status == 500)
        #expect(response.headers["Content-Type"] == "application/problem+json")
        #expect(!bodyText(response).contains("Boom"))
    }

    @Test func cancellationBecomesA504() async throws {
        #expect(try await send(Self.makeRouter(), .get, "/cancelled").response.status == 504)
    }

    @Test func reRegisteringReplacesTheHandler() async throws {
        var router = Router()
        router.get("/x") { _ in .text("one") }
        router.get("/x") { _ in .text("two") }
        #expect(bodyText(try await send(router, .get, "/x").response) == "two")
        #expect(try await send(router, .post, "/x").response.headers["Allow"] == "GET, HEAD")
    }

    @Test func observerSeesEveryAnsweredRequestOnce() async throws {
        let records = Mutex<[RequestRecord]>([])
        var router = Self.makeRouter()
        router.observer = { record in records.withLock { $0.append(record) } }
        router.get("/tagged") { _ in Response(status: 200, headers: ["X-Cache": "HIT"], body: [1, 2, 3]) }
        _ = try await send(router, .get, "/tagged")
        _ = try await send(router, .get, "/healthz")
        _ = try await send(router, .get, "/nope")
        _ = try await send(router, .delete, "/healthz")
        _ = try await send(router, .get, "/boom")
        let seen = records.withLock { $0 }
        #expect(seen.map(\.route) == ["/tagged", "/healthz", nil, nil, "/boom"])
        #expect(seen.map(\.status) == [200, 200, 404, 405, 500])
        #expect(seen[0].bodyBytes == 3)
        #expect(seen[0].responseHeaders["X-Cache"] == "HIT")
        #expect(seen[0].method == .get)
        #expect(seen[2].target == "/nope")
        #expect(seen.allSatisfy { $0.duration >= .zero })
    }

    /// A shortcut that answers later (a read it joined) is observed once, with its route and the raw request's
    /// parts, when the reply comes; the shortcut is handed the client's address and the request's id.
    @Test func aShortcutAnsweringLaterIsObservedOnceWithItsRoute() async throws {
        let records = Mutex<[RequestRecord]>([])
        let seenParts = Mutex<[String]>([])
        var router = Self.makeRouter()
        router.observer = { record in records.withLock { $0.append(record) } }
        router.shortcut = { method, target, _, address, id in
            seenParts.withLock { $0.append("\(method.rawValue) \(target) \(address.isLoopback) \(id?.value ?? "-")") }
            guard target == "/joined" else { return nil }
            return (.later(Later { reply in DispatchQueue.global().async { reply(.text("joined")) } }), "/joined/{x}")
        }
        let id = try #require(RequestID(validating: "shortcut-1"))
        let loopback = [UInt8]([127, 0, 0, 1]).withUnsafeBytes { ClientAddress(bytes: $0) }
        let answer = router.answer(
            method: .get, target: "/joined", headers: HTTPHeaders(), body: [], clientAddress: loopback, requestID: id)
        let (response, immediate) = await resolve(answer)
        #expect(bodyText(response) == "joined" && !immediate)
        _ = await resolve(router.answer(
            method: .get, target: "/healthz", headers: HTTPHeaders(), body: [], clientAddress: .unknown))
        let seen = records.withLock { $0 }
        #expect(seen.map(\.route) == ["/joined/{x}", "/healthz"])
        #expect(seen.first?.requestID?.value == id.value && seen.first?.target == "/joined" && seen.first?.status == 200)
        #expect(seenParts.withLock { $0 } == ["GET /joined true shortcut-1", "GET /healthz false -"])
    }
}

/// `Later`: the task adapter, and replies from other threads.
@Suite(.timeLimit(.minutes(1))) struct LaterTests {
    @Test func theTaskAdapterBindsTheRequestIDAndMapsErrors() async throws {
        let id = try #require(RequestID(validating: "adapter-1"))
        let seen = await Later.task(id: id) { .text(RequestID.current?.value ?? "-") }.response()
        #expect(bodyText(seen) == "adapter-1")
        let problem = await Later.task(id: nil) { throw Problem.badRequest(detail: "no") }.response()
        #expect(problem.status == 400)
        let cancelled = await Later.task(id: nil) { throw CancellationError() }.response()
        #expect(cancelled.status == 504)
    }

    @Test func aReplyFromAnotherThreadIsTheAnswerAndTheFirstOneCounts() async {
        let later = Later { reply in
            DispatchQueue.global().async {
                reply(.text("from a thread"))
                reply(.text("ignored"))
            }
        }
        #expect(bodyText(await later.response()) == "from a thread")
    }
}
