import Foundation
import HTTPRouting
import Logging
import NIOConcurrencyHelpers
@testable import Settings
import TestSupport
import Testing
import UnifiedCache

@testable import UnicacheApp

/// A fetcher the tests script: counts calls per key, answers a JSON body, fails, or waits at a gate.
final class ScriptedFetcher: Fetcher {
    enum Behaviour: Sendable {
        case answer
        case fail(FetchError)
        case noStore
    }

    private struct State {
        var calls: [FetchRequest] = []
        var behaviour: Behaviour = .answer
        var bodies: [String: String] = [:]
        var failures: [String: FetchError] = [:]
        var arrivals: [(count: Int, latch: Latch)] = []
    }

    private let state = NIOLockedValueBox(State())
    private let latch = Latch(open: true)
    let clock: ManualWallClock

    init(clock: ManualWallClock) { self.clock = clock }

    var calls: [FetchRequest] { state.withLockedValue { $0.calls } }
    func count(_ key: String) -> Int { state.withLockedValue { $0.calls.filter { $0.key == key }.count } }
    func set(_ behaviour: Behaviour) { state.withLockedValue { $0.behaviour = behaviour } }
    /// The body for `key` (else a generated one).
    func set(body: String, for key: String) { state.withLockedValue { $0.bodies[key] = body } }
    /// `key`'s fetches fail with `failure`, whatever the behaviour.
    func set(failure: FetchError, for key: String) { state.withLockedValue { $0.failures[key] = failure } }

    /// From now on fetches wait until `open()`.
    func close() { latch.close() }
    func open() { latch.open() }
    /// Returns once `count` fetches have arrived (at the gate or done).
    func waitForCalls(_ count: Int) async {
        let latch = Latch()
        let ready = state.withLockedValue { state in
            if state.calls.count >= count { return true }
            state.arrivals.append((count, latch))
            return false
        }
        if !ready { await latch.wait() }
    }

    func fetch(_ request: FetchRequest) async throws(FetchError) -> FetchedValue {
        let arrived = state.withLockedValue { state in
            state.calls.append(request)
            defer { state.arrivals.removeAll { $0.count <= state.calls.count } }
            return state.arrivals.filter { $0.count <= state.calls.count }
        }
        for waiter in arrived { waiter.latch.open() }
        await latch.wait()
        let (behaviour, body, number, failure) = state.withLockedValue {
            ($0.behaviour, $0.bodies[request.key], $0.calls.count, $0.failures[request.key])
        }
        if let failure { throw failure }
        switch behaviour {
        case .fail(let error): throw error
        case .answer, .noStore:
            let text = body ?? Self.body(for: request, number: number, now: clock.now())
            if case .noStore = behaviour { return FetchedValue(body: Array(text.utf8), storable: false) }
            return FetchedValue(body: Array(text.utf8))
        }
    }

    static func body(for request: FetchRequest, number: Int, now: Date) -> String {
        let stamp = ISO8601DateFormatter().string(from: now)
        return #"{"key":"\#(request.key)","n":\#(number),"latestSampleTimestamp":"\#(stamp)","answered":false}"#
    }
}

/// One app over a scripted fetcher and a manual clock, driven in-process through its router.
struct AppHarness {
    static let start = ISO8601DateFormatter().date(from: "2026-11-22T10:00:00Z") ?? Date(timeIntervalSince1970: 0)
    static let token = "s3cret-token"

    let clock = ManualWallClock(AppHarness.start)
    let fetcher: ScriptedFetcher
    let app: App

    /// `domains`: those the scripted fetcher serves (the others have no source, as with `--upstream` for another
    /// domain and no `--demo`).
    init(
        adminToken: String? = AppHarness.token, ttl: [String: Duration] = [:], secondTier: (any SecondTier)? = nil,
        memory: MemoryTierConfiguration = MemoryTierConfiguration(), domains: [UpstreamDomain] = UpstreamDomain.allCases
    ) {
        fetcher = ScriptedFetcher(clock: clock)
        let cache = UnifiedCacheManager(
            configuration: memory, secondTier: secondTier, clock: clock, ticker: ManualClock(),
            userKeys: ResourceTable.userKeys, logger: Logger(label: "test"))
        let fetcher = self.fetcher
        var dependencies = AppDependencies(
            cache: cache, fetchers: Dictionary(uniqueKeysWithValues: domains.map { ($0, fetcher) }),
            adminToken: adminToken, logger: Logger(label: "test"), clock: clock, gateClock: ManualClock())
        dependencies.ttlOverrides = ttl
        app = App.build(dependencies)
    }

    /// Sends a request the way the server would: the immediate path first, else the deferred one.
    func send(
        _ method: HTTPMethod = .get, _ target: String, headers: [(String, String)] = [], body: String = "",
        admin: Bool = false
    ) async throws -> Response {
        var fields = headers
        if admin { fields.append(("Authorization", "Bearer \(AppHarness.token)")) }
        // The server's entry point: the router's shortcut first, then parsing and routing.
        let answer = app.router.answer(
            method: method, target: target, headers: HTTPHeaders(fields), body: Array(body.utf8), clientAddress: .unknown)
        return await answer.response()
    }

    /// Whether the request is answered on the immediate (synchronous) path.
    func isImmediate(_ target: String) throws -> Bool {
        let answer = app.router.answer(
            method: .get, target: target, headers: HTTPHeaders(), body: [], clientAddress: .unknown)
        if case .now = answer { return true }
        return false
    }
}

extension Response {
    var text: String { String(decoding: body, as: UTF8.self) }
    var json: [String: Any] { (try? JSONSerialization.jsonObject(with: Data(body)) as? [String: Any]) ?? [:] }
    func header(_ name: String) -> String? { headers[name] }
}
