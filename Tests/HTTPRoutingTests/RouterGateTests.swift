import Synchronization
import Testing
@testable import HTTPRouting

/// A counter shared with the router's closures.
final class Count: Sendable {
    private let value = Atomic(0)
    func add() { value.add(1, ordering: .relaxed) }
    var now: Int { value.load(ordering: .relaxed) }
}

/// The router's access check: asked before the shortcut and every handler, with the peer's address.
@Suite(.timeLimit(.minutes(1))) struct RouterGateTests {
    static func router(gate: @escaping AccessCheck, handled: Count, shortcuts: Count) -> Router {
        var router = Router()
        router.shortcut = { _, target, _, _, _ in
            shortcuts.add()
            return target == "/fast" ? (.now(.text("fast")), "/fast") : nil
        }
        router.get("/slow") { _ in
            handled.add()
            return .text("slow")
        }
        router.accessCheck = gate
        return router
    }

    func dispatch(_ router: Router, _ target: String, from peer: [UInt8] = [10, 0, 0, 1]) async -> (Response, Bool) {
        let address = peer.withUnsafeBytes { ClientAddress(bytes: $0) }
        let (response, immediate) = await resolve(router.answer(
            method: .get, target: target, headers: HTTPHeaders(), body: [], clientAddress: address))
        return (response, immediate)
    }

    @Test func aDenialReachesNeitherTheShortcutNorAHandler() async {
        let handled = Count(), shortcuts = Count()
        let router = Self.router(
            gate: { _, _, _, peer in peer.isLoopback ? .pass : .answer(Problem.forbidden(detail: "no").response) },
            handled: handled, shortcuts: shortcuts)
        for target in ["/fast", "/slow"] {
            let (response, immediate) = await dispatch(router, target)
            #expect(response.status == 403 && immediate)
        }
        #expect(handled.now == 0 && shortcuts.now == 0)
        #expect(bodyText(await dispatch(router, "/fast", from: [127, 0, 0, 1]).0) == "fast")
        #expect(bodyText(await dispatch(router, "/slow", from: [127, 0, 0, 1]).0) == "slow")
        #expect(handled.now == 1)
    }

    @Test func aGateThatWaitsDecidesLater() async {
        let handled = Count(), shortcuts = Count()
        let router = Self.router(
            gate: { _, target, _, _ in
                .wait { target == "/slow" ? nil : Problem.unauthorized(detail: "later").response }
            },
            handled: handled, shortcuts: shortcuts)
        let (denied, deniedImmediately) = await dispatch(router, "/fast")
        #expect(denied.status == 401 && !deniedImmediately)
        let (allowed, allowedImmediately) = await dispatch(router, "/slow")
        #expect(bodyText(allowed) == "slow" && !allowedImmediately)
        #expect(handled.now == 1 && shortcuts.now == 1)
    }
}
