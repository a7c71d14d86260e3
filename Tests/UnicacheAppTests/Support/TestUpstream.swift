import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import TestSupport

/// A fake upstream for tests: an HTTP/1.1 server on 127.0.0.1 (port 0) that records every
/// request target, counts requests per path and answers each path as the test told it
/// (JSON, 404, 429, 500, no-store, held back by a `Latch`, delayed, or never).
/// A path nobody configured answers 200 `{"path":"…","request":N}` (N counts that path's requests).
/// The lock is NIO's pthread-based `NIOLockedValueBox`, not `Synchronization.Mutex`: on Linux, Mutex's
/// futex is invisible to ThreadSanitizer, which then reports false races (checked with a two-thread counter),
/// and this support code must stay clean under `--sanitize=thread`.
final class TestUpstream: Sendable {
    private typealias Connection = NIOAsyncChannel<HTTPServerRequestPart, HTTPServerResponsePart>

    private struct State {
        var behaviors: [String: Behavior] = [:]
        var counts: [String: Int] = [:]
        var targets: [String] = []
        /// The headers of the latest request per path.
        var headers: [String: HTTPHeaders] = [:]
        var countWaiters: [(path: String, count: Int, latch: Latch)] = []
        /// Trickled answers whose client closed the connection before the body was whole.
        var abandonedTrickles = 0
        var server: Task<Void, Never>?
    }

    private let state = NIOLockedValueBox(State())
    /// Connections accepted and not yet served, by channel, and whether the server has stopped serving. Held until
    /// served or closed: a wrapper dropped unserved (accepted while the server stops) would be deinited with its writer
    /// unfinished once its channel turns active, which NIO traps.
    private struct Unserved {
        var connections: [ObjectIdentifier: Connection] = [:]
        var stopped = false
    }

    private let unserved = NIOLockedValueBox(Unserved())

    init() {}

    /// Binds 127.0.0.1 on a free port and starts serving; returns the port.
    func start() async throws -> Int {
        let server = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .serverChannelOption(.socketOption(.so_reuseaddr), value: 1)
            .bind(host: "127.0.0.1", port: 0) { [unserved] channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    let connection = try Connection(wrappingChannelSynchronously: channel)
                    let late = unserved.withLockedValue { unserved in
                        if !unserved.stopped { unserved.connections[ObjectIdentifier(channel)] = connection }
                        return unserved.stopped
                    }
                    // Accepted after the server stopped serving: nobody will serve it.
                    if late { Task { try? await connection.executeThenClose { _, _ in } } }
                    return connection
                }
            }
        let port = server.channel.localAddress?.port ?? 0
        let task = Task { await self.serve(server) }
        state.withLockedValue { $0.server = task }
        return port
    }

    /// Stops accepting, drops open connections (hanging and gated ones included) and waits for the end.
    func shutdown() async {
        let task = state.withLockedValue { state in
            defer { state.server = nil }
            return state.server
        }
        task?.cancel()
        await task?.value
        // Accepted while stopping and never served: finished and closed here (later ones as they come).
        let leftovers = unserved.withLockedValue { unserved in
            defer { unserved = Unserved(stopped: true) }
            return Array(unserved.connections.values)
        }
        for connection in leftovers { try? await connection.executeThenClose { _, _ in } }
    }

    /// `http://127.0.0.1:PORT`
    static func baseURL(port: Int) -> String { "http://127.0.0.1:\(port)" }

    // MARK: telling it what to answer

    func set(_ path: String, _ behavior: Behavior) {
        state.withLockedValue { $0.behaviors[path] = behavior }
    }

    func reply(_ path: String, _ reply: Reply) {
        set(path, .reply(reply))
    }

    // MARK: what it saw

    /// Requests received for `path` (the target without its query).
    func requestCount(_ path: String) -> Int {
        state.withLockedValue { $0.counts[path, default: 0] }
    }

    /// The headers of the latest request for `path`.
    func lastHeaders(_ path: String) -> HTTPHeaders? {
        state.withLockedValue { $0.headers[path] }
    }

    /// Trickled answers (`.trickle`) whose client closed the connection before the body was whole.
    var abandonedTrickles: Int { state.withLockedValue { $0.abandonedTrickles } }

    /// Every request target (path and query, as received), in arrival order.
    var requestTargets: [String] { state.withLockedValue { $0.targets } }

    /// Returns once `path` has received at least `count` requests, or the task is cancelled (a test's time limit).
    func waitForRequests(_ path: String, count: Int) async {
        let latch = Latch()
        let reached = state.withLockedValue { state in
            if state.counts[path, default: 0] >= count { return true }
            state.countWaiters.append((path, count, latch))
            return false
        }
        if !reached { await latch.wait() }
    }

    // MARK: serving

    private func serve(_ server: NIOAsyncChannel<Connection, Never>) async {
        try? await withThrowingDiscardingTaskGroup { group in
            try await server.executeThenClose { connections in
                for try await connection in connections {
                    group.addTask { await self.handle(connection) }
                }
            }
        }
    }

    private func handle(_ connection: Connection) async {
        unserved.withLockedValue { $0.connections[ObjectIdentifier(connection.channel)] = nil }
        try? await connection.executeThenClose { inbound, outbound in
            var head: HTTPRequestHead?
            for try await part in inbound {
                switch part {
                case .head(let requestHead):
                    head = requestHead
                case .body:
                    continue
                case .end:
                    guard let requestHead = head else { continue }
                    head = nil
                    if case .trickle(let interval)? = state.withLockedValue({ $0.behaviors[Self.path(of: requestHead.uri)] }) {
                        _ = try await answer(requestHead.uri, headers: requestHead.headers)
                        await trickle(every: interval, version: requestHead.version, to: outbound)
                        return
                    }
                    let reply = try await answer(requestHead.uri, headers: requestHead.headers)
                    var headers = HTTPHeaders(reply.headers.map { ($0.name, $0.value) })
                    headers.replaceOrAdd(name: "Content-Length", value: String(reply.body.count))
                    let status = HTTPResponseStatus(statusCode: reply.status)
                    try await outbound.write(.head(HTTPResponseHead(version: requestHead.version, status: status, headers: headers)))
                    try await outbound.write(.body(.byteBuffer(ByteBuffer(bytes: reply.body))))
                    try await outbound.write(.end(nil))
                }
            }
        }
    }

    /// A `.trickle` answer: a head, then a byte every `interval` until a write fails (the client closed the
    /// connection: counted) or the upstream shuts down.
    private func trickle(
        every interval: Duration, version: HTTPVersion, to outbound: NIOAsyncChannelOutboundWriter<HTTPServerResponsePart>
    ) async {
        let headers = HTTPHeaders([("Content-Type", "application/json"), ("Content-Length", String(1 << 20))])
        do {
            try await outbound.write(.head(HTTPResponseHead(version: version, status: .ok, headers: headers)))
            while true {
                try await outbound.write(.body(.byteBuffer(ByteBuffer(string: " "))))
                try await Task.sleep(for: interval)
            }
        } catch is CancellationError {
            return
        } catch {
            state.withLockedValue { $0.abandonedTrickles += 1 }
        }
    }

    /// A request target's path (without its query).
    private static func path(of target: String) -> String { String(target.prefix { $0 != "?" }) }

    /// Records the request, then produces (or withholds) its answer.
    private func answer(_ target: String, headers: HTTPHeaders) async throws -> Reply {
        let path = Self.path(of: target)
        let (behavior, count, ready) = state.withLockedValue { state in
            state.targets.append(target)
            state.headers[path] = headers
            state.counts[path, default: 0] += 1
            let count = state.counts[path, default: 0]
            let ready = state.countWaiters.filter { $0.path == path && $0.count <= count }.map(\.latch)
            state.countWaiters.removeAll { $0.path == path && $0.count <= count }
            return (state.behaviors[path], count, ready)
        }
        for latch in ready { latch.open() }
        switch behavior {
        case .reply(let reply):
            return reply
        case .gated(let latch, let reply):
            await latch.wait()
            try Task.checkCancellation()
            return reply
        case .delayed(let delay, let reply):
            try await Task.sleep(for: delay)
            return reply
        case .hang:
            await Latch().wait()
            try Task.checkCancellation()
            return .serverError
        case .trickle:
            return .serverError  // answered by `trickle`, never by a reply
        case nil:
            return .json(#"{"path":"\#(path)","request":\#(count)}"#)
        }
    }
}
