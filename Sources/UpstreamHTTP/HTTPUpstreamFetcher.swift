import AsyncHTTPClient
import Clocks
import Foundation
import HTTPRouting
import Logging
import NIOCore
import NIOPosix
import Settings
import UnifiedCache

/// Fetches a domain's resources from its real HTTP upstream:
/// `GET {baseURL}{request.path}?{normalised query}`, or `GET {baseURL}{template}` for a namespace with an
/// `--upstream-path` template (CONTRACT §11.2); the body stored byte for byte.
///
/// 2xx → the body with the upstream's Content-Type (`Cache-Control: no-store` → not storable);
/// 404 → `.notFound`; 429 → `.rateLimited` (from `Retry-After`); any other status, a connection
/// error or a body over the cap → `.unavailable`; no answer in time → `.timeout`; a request the HTTP client
/// refuses to send → `.invalidRequest` (the request's failure, not the upstream's).
///
/// Every value of a request that reaches the client is one it accepts: path and query values percent-encoded,
/// `X-Request-ID` visible ASCII, `traceparent` made here and `tracestate` passed on only when valid (`TraceState`).
/// Never logs bodies or headers.
public struct HTTPUpstreamFetcher: Fetcher {
    public let baseURL: String
    /// Sent with every request; their values are never logged.
    let headers: [UpstreamHeader]
    /// `Accept: application/json` unless `headers` name an `Accept` of their own (an upstream's media type).
    let sendsDefaultAccept: Bool
    /// `--upstream-path` templates by namespace.
    let paths: [String: UpstreamPathTemplate]
    let client: UpstreamClient

    init(baseURL: String, headers: [UpstreamHeader] = [], paths: [String: UpstreamPathTemplate] = [:], client: UpstreamClient) {
        self.baseURL = baseURL
        self.headers = headers
        sendsDefaultAccept = !headers.contains { $0.name.lowercased() == "accept" }
        self.paths = paths
        self.client = client
    }

    /// The full URL asked for `request`.
    public func url(for request: FetchRequest) -> String {
        if let template = paths[request.namespace] {
            return baseURL + template.expand(user: request.user, parameters: request.parameters)
        }
        let query = Self.queryString(request.query)
        return baseURL + request.path + (query.isEmpty ? "" : "?" + query)
    }

    public func fetch(_ request: FetchRequest) async throws(FetchError) -> FetchedValue {
        var outgoing = HTTPClientRequest(url: url(for: request))
        outgoing.method = .GET
        if sendsDefaultAccept { outgoing.headers.add(name: "Accept", value: "application/json") }
        // The body is stored and served as the upstream sends it, with no `Content-Encoding` of its own: asked for
        // unencoded (without this header RFC 9110 lets a server pick any coding), and refused when encoded anyway.
        outgoing.headers.add(name: "Accept-Encoding", value: "identity")
        for header in headers { outgoing.headers.add(name: header.name, value: header.value) }
        // Valid already (a request's id is); checked again so that no caller can hand the client a value it refuses.
        if let id = request.requestID.flatMap(RequestID.init(validating:)) {
            outgoing.headers.add(name: RequestID.headerName, value: id.value)
        }
        let trace = TraceParent.outgoing(
            traceparent: request.traceparent, tracestate: request.tracestate, requestID: request.requestID)
        outgoing.headers.add(name: TraceParent.headerName, value: trace.traceparent)
        if let state = trace.tracestate { outgoing.headers.add(name: TraceParent.stateHeaderName, value: state) }
        let start = client.elapsed.now()
        do {
            let (status, result) = try await client.httpClient.exchange(outgoing, within: client.timeout) { response in
                (response.status.code, try await self.outcome(of: response))
            }
            client.logger.debug("upstream answered", metadata: Self.metadata(request, trace.traceparent, [
                "status": "\(status)",
                "ms": "\((client.elapsed.now() - start).wholeNanosecondsSaturating / 1_000_000)",
            ]))
            return result
        } catch {
            let mapped = (error as? FetchError) ?? Self.map(error)
            client.logger.debug("upstream fetch failed", metadata: Self.metadata(request, trace.traceparent, ["error": "\(mapped)"]))
            throw mapped
        }
    }

    /// A fetch's log metadata: its namespace, the id of the request that caused it and the trace it sent (never
    /// headers or a body).
    private static func metadata(_ request: FetchRequest, _ traceparent: String, _ more: Logger.Metadata) -> Logger.Metadata {
        var metadata = more
        metadata["namespace"] = "\(request.namespace)"
        if let id = request.requestID { metadata["requestId"] = "\(id)" }
        if let sent = TraceParent(parsing: traceparent) {
            metadata["traceId"] = "\(sent.traceID)"
            metadata["spanId"] = "\(sent.parentID)"
        }
        return metadata
    }

    /// Reads the answer: status mapping and the capped body. 200 and 203 carry the resource (RFC 9110 section 15.3);
    /// another 2xx does not (204 has no body, 206 a part, 202 a promise) and would be stored as the value: a failure.
    private func outcome(of response: HTTPClientResponse) async throws -> FetchedValue {
        switch response.status.code {
        case 200, 203:
            // Not named: the upstream's header value is not echoed into a problem or a log line.
            if ContentCoding.isEncoded(response.headers["Content-Encoding"]) {
                throw FetchError.unavailable("upstream body in a content coding it was not asked for")
            }
            return FetchedValue(
                body: try await readBody(of: response),
                contentType: response.headers.first(name: "Content-Type") ?? "application/json",
                storable: !Self.isNoStore(response.headers["Cache-Control"])
            )
        case 404:
            throw FetchError.notFound
        case 429:
            let seconds = response.headers.first(name: "Retry-After").flatMap {
                RetryAfter.seconds(from: $0, now: client.clock.now())
            }
            throw FetchError.rateLimited(retryAfter: seconds)
        default:
            throw FetchError.unavailable("upstream status \(response.status.code)")
        }
    }

    /// The whole body, or `.unavailable` as soon as it is known to exceed the cap.
    private func readBody(of response: HTTPClientResponse) async throws -> [UInt8] {
        let tooLarge = FetchError.unavailable("upstream body too large")
        let declared = response.headers.first(name: "Content-Length").flatMap { Int($0) }
        if let declared, declared > client.maxBodyBytes { throw tooLarge }
        var body: [UInt8] = []
        body.reserveCapacity(min(declared ?? 0, client.maxBodyBytes))
        for try await chunk in response.body {
            guard chunk.readableBytes <= client.maxBodyBytes - body.count else { throw tooLarge }
            // Copied from the buffer's bytes: appending its view instantiated IndexingIterator<ByteBufferView>'s
            // conformance at run time, a scan of every conformance in the binary on a process's first fetch (perf).
            chunk.withUnsafeReadableBytes { body.append(contentsOf: $0) }
        }
        return body
    }

    /// `true` when any directive of the `Cache-Control` values is `no-store`.
    static func isNoStore(_ cacheControl: [String]) -> Bool {
        cacheControl.contains { value in
            value.split(separator: ",").contains {
                $0.trimmingCharacters(in: .whitespaces).lowercased() == "no-store"
            }
        }
    }

    /// What the HTTP client refuses before anything leaves the process, the request as built (a header name or
    /// value, its URL), in words that hold none of its values; nil for any other error.
    static func refusedBeforeSending(_ error: HTTPClientError) -> String? {
        switch error {
        case .invalidURL, .emptyHost, .emptyScheme:
            return "the HTTP client refused the request's URL"
        default:
            // These hold the refused values: told apart by their short descriptions, which do not.
            switch error.shortDescription {
            case HTTPClientError.unsupportedScheme("").shortDescription:
                return "the HTTP client refused the request's URL"
            case HTTPClientError.invalidHeaderFieldNames([]).shortDescription,
                HTTPClientError.invalidHeaderFieldValues([]).shortDescription:
                return "the HTTP client refused a header of the request"
            default:
                return nil
            }
        }
    }

    /// Errors of connecting, before any byte of the request was sent: refused, no route, no address.
    static func neverSent(_ error: any Error) -> Bool {
        if let error = error as? IOError {
            return [ECONNREFUSED, ENETUNREACH, EHOSTUNREACH, EADDRNOTAVAIL].contains(error.errnoCode)
        }
        return error is NIOConnectionError || error is SocketAddressError
    }

    /// Client and transport errors as a `FetchError`. An `HTTPClientError` is named by its short description, which
    /// carries none of the values it may hold (a refused header's).
    static func map(_ error: any Error) -> FetchError {
        if let error = error as? HTTPClientError {
            if let refusal = refusedBeforeSending(error) { return .invalidRequest(refusal) }
            switch error {
            case .deadlineExceeded, .readTimeout, .connectTimeout, .getConnectionFromPoolTimeout:
                return .timeout
            default:
                return .unavailable("upstream error: \(error.shortDescription)")
            }
        }
        if error is CancellationError {
            return .unavailable("upstream fetch cancelled")
        }
        if neverSent(error) {
            return .unreachable("upstream unreachable: \(error)")
        }
        return .unavailable("upstream connection failed: \(error)")
    }
}
