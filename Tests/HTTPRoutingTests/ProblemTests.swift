import Testing
@testable import HTTPRouting

@Suite(.timeLimit(.minutes(10))) struct ProblemTests {
    @Test func rendersProblemJSONWithStandardMembersFirst() {
        let problem = Problem(
            type: Problem.typeURI("unknown-event"), status: 400, detail: "Unknown \"type\".\n",
            members: [.init("known", .strings(["a", "b"])), .init("count", .int(2)), .init("ok", .bool(false))])
        #expect(problem.title == "Bad Request")
        #expect(problem.json == #"{"type":"https://unicache.dev/problems/unknown-event","title":"Bad Request","status":400,"detail":"Unknown \"type\".\n","known":["a","b"],"count":2,"ok":false}"#)
        let response = problem.response
        #expect(response.status == 400)
        #expect(response.headers["Content-Type"] == "application/problem+json")
        #expect(response.body == Array(problem.json.utf8))
    }

    @Test func escapesControlCharacters() {
        let problem = Problem(status: 400, detail: "a\u{1}b\\")
        #expect(problem.json.contains(#""detail":"a\u0001b\\""#))
    }

    @Test func helpersCarryTheirHeaders() {
        #expect(Problem.methodNotAllowed(allowed: [.get, .head]).response.headers["Allow"] == "GET, HEAD")
        #expect(Problem.serviceUnavailable(detail: "x", retryAfterSeconds: 5).response.headers["Retry-After"] == "5")
        #expect(Problem.unauthorized(detail: "x").response.headers["WWW-Authenticate"] == "Bearer")
        let tooLarge = Problem.contentTooLarge(limit: 1024)
        #expect(tooLarge.status == 413)
        #expect(tooLarge.response.headers["Connection"] == "close")
        #expect(Problem.badFraming(detail: "x").response.headers["Connection"] == "close")
        #expect(Problem.notFound().type == "about:blank")
        #expect(Problem.gatewayTimeout(detail: "x").title == "Gateway Timeout")
        #expect(Problem.badGateway(detail: "x").status == 502)
        #expect(Problem.forbidden(detail: "x").status == 403)
    }
}
