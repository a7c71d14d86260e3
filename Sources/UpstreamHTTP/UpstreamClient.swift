import AsyncHTTPClient
import Clocks
import Foundation
import Logging
import Settings
import UnifiedCache

/// Owns the one `HTTPClient` (and its connection pool) shared by every domain's
/// `HTTPUpstreamFetcher`; the app calls `shutdown()` once when it stops.
public final class UpstreamClient: Sendable {
    /// A base URL that cannot serve as an upstream.
    public struct InvalidBaseURL: Error, Sendable, Equatable {
        public let url: String
    }

    public let timeout: Duration
    public let maxBodyBytes: Int
    package let httpClient: HTTPClient
    let clock: any WallClock
    /// Readings of the process's monotonic clock: a fetch's time in its log line.
    let elapsed: Elapsed
    let logger: Logger

    /// - Parameters:
    ///   - timeout: per upstream request, its whole answer within it (connect, head and body) → `FetchError.timeout`.
    ///   - maxBodyBytes: larger bodies are `FetchError.unavailable`.
    ///   - connectionsPerUpstream: connections the pool opens to one upstream at once: the largest
    ///     `--upstream-concurrency`, so that the gate, not the pool, decides how many requests are in flight.
    ///   - clock: turns a `Retry-After` HTTP-date into seconds.
    ///   - ticker: the process's monotonic clock, timing each fetch (the request's own time-out is the HTTP client's,
    ///     on NIO's clock).
    public init(
        timeout: Duration = .seconds(5),
        maxBodyBytes: Int = 8 << 20,
        connectionsPerUpstream: Int = UpstreamProtection.defaultConcurrency,
        clock: any WallClock,
        ticker: any Clock<Duration>,
        logger: Logger
    ) {
        self.timeout = timeout
        self.maxBodyBytes = maxBodyBytes
        self.clock = clock
        elapsed = Elapsed(ticker)
        self.logger = logger
        let nanoseconds = timeout.wholeNanosecondsSaturating
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .nanoseconds(nanoseconds), read: .nanoseconds(nanoseconds)),
            decompression: .disabled
        )
        configuration.httpVersion = .http1Only
        configuration.connectionPool.concurrentHTTP1ConnectionsPerHostSoftLimit = max(1, connectionsPerUpstream)
        // A refused connection fails the request at once; the pool would otherwise retry it until the deadline.
        configuration.connectionPool.retryConnectionEstablishment = false
        httpClient = HTTPClient(eventLoopGroupProvider: .singleton, configuration: configuration)
    }

    /// A fetcher for one domain's upstream, e.g. `http://up:9000` (a trailing `/` is ignored), sending `headers`
    /// (service credentials) with every request; a namespace with a template in `paths` asks for its expansion.
    public func fetcher(
        baseURL: String, headers: [UpstreamHeader] = [], paths: [String: UpstreamPathTemplate] = [:]
    ) throws(InvalidBaseURL) -> HTTPUpstreamFetcher {
        var base = baseURL
        while base.hasSuffix("/") { base.removeLast() }
        guard
            let url = URL(string: base),
            let scheme = url.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = url.host, !host.isEmpty,
            url.query == nil, url.fragment == nil
        else { throw InvalidBaseURL(url: baseURL) }
        return HTTPUpstreamFetcher(baseURL: base, headers: headers, paths: paths, client: self)
    }

    /// Closes pooled connections; fetches after this fail as `.unavailable`.
    public func shutdown() async {
        do {
            try await httpClient.shutdown()
            logger.info("upstream client shut down")
        } catch {
            logger.info("upstream client was already shut down")
        }
    }
}
