import AsyncHTTPClient
@testable import Settings
import TestSupport
import UnicacheApp
@testable import UpstreamHTTP

/// Runs `body` with `client` and shuts the client down afterwards, whether `body` returns or throws: an
/// AsyncHTTPClient never shut down traps in its deinit and takes the whole test process with it. Write
/// `try await withHTTPClient(UpstreamClient(logger: logger)) { client in … }`.
@discardableResult
func withHTTPClient<Value>(
    _ client: UpstreamClient, isolation: isolated (any Actor)? = #isolation, _ body: (UpstreamClient) async throws -> Value
) async throws -> Value {
    try await withService(ShutDown { await client.shutdown() }, isolation: isolation) { _ in try await body(client) }
}

/// The same for a plain `HTTPClient`.
@discardableResult
func withHTTPClient<Value>(
    _ client: HTTPClient, isolation: isolated (any Actor)? = #isolation, _ body: (HTTPClient) async throws -> Value
) async throws -> Value {
    try await withService(ShutDown { try? await client.shutdown() }, isolation: isolation) { _ in try await body(client) }
}

/// A client's shutdown as the kit's `StoppableService`.
private struct ShutDown: StoppableService {
    let shutdown: @Sendable () async -> Void

    func stop() async { await shutdown() }
}

extension TestUpstream: StoppableService {
    func stop() async { await shutdown() }
}
