import HTTPRouting

/// Why a health check did not get an HTTP status.
public enum HealthcheckError: Error, Sendable, Equatable, CustomStringConvertible {
    case resolve(host: String, reason: String)
    case connect(String)
    case timeout
    case io(String)
    case malformedResponse
    /// Plain HTTP was answered with a TLS record: the port speaks HTTPS (CONTRACT §11.4).
    case speaksTLS
    /// Plain HTTP was answered by a close and no byte (libmicrohttpd's HTTPS port does this).
    case closedWithoutAnswer
    /// The TLS handshake failed, or the service showed another certificate than its `--tls-cert`.
    case tls(String)

    public var description: String {
        switch self {
        case .resolve(let host, let reason): "cannot resolve \(host): \(reason)"
        case .connect(let reason): "cannot connect: \(reason)"
        case .timeout: "no answer in time"
        case .io(let reason): "connection failed: \(reason)"
        case .malformedResponse: "the answer is not HTTP"
        case .speaksTLS:
            "the port speaks HTTPS: pass --tls-cert FILE (or UNICACHE_TLS_CERT), the certificate the service serves"
        case .closedWithoutAnswer:
            "the connection closed without an answer, as an HTTPS port does to plain HTTP: if the service has "
                + "--tls-cert, pass the same --tls-cert FILE (or UNICACHE_TLS_CERT)"
        case .tls(let reason): "TLS failed: \(reason)"
        }
    }
}

/// A tiny blocking HTTP/1.1 client over POSIX sockets for `unicache healthcheck` (Docker's HEALTHCHECK):
/// no libcurl, no URLSession. It sends one `GET` and reads only the status line; over HTTPS when `tls` is set.
public struct HealthcheckClient: Sendable {
    public var host: String
    public var port: Int
    public var path: String
    /// For the whole check: connecting, sending and reading the status line.
    public var timeout: Duration
    /// HTTPS, accepting only the service's own certificate; `nil`: plain HTTP.
    public var tls: HealthcheckTLS?

    public init(
        host: String, port: Int, path: String = "/healthz", timeout: Duration = .seconds(2), tls: HealthcheckTLS? = nil
    ) {
        self.host = host
        self.port = port
        self.path = path
        self.timeout = timeout
        self.tls = tls
    }

    /// Where to connect for a service bound to `host`: a wildcard bind address (`0.0.0.0`, `::`) means loopback.
    package static func connectHost(forBindAddress host: String) -> String {
        switch host {
        case "", "0.0.0.0": "127.0.0.1"
        case "::", "[::]": "::1"
        default: host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        }
    }

    /// The HTTP status code of `GET path`.
    public func status() throws(HealthcheckError) -> Int {
        let head = try exchange(
            agent: "unicache-healthcheck", accept: "application/json", until: Self.lineEnd, limit: 8192)
        return try Self.statusCode(ofResponseHead: head)
    }

    /// Sends `GET path` and reads the answer until `marker` (at most `limit` bytes) or, without one, all of it until
    /// the service closes the connection (more than `limit` bytes is an error); over HTTPS when `tls` is set.
    private func exchange(agent: String, accept: String, until marker: [UInt8]?, limit: Int) throws(HealthcheckError)
        -> [UInt8]
    {
        let deadline = ContinuousClock.now.advanced(by: timeout)
        let target = Self.connectHost(forBindAddress: host)
        let socket = try ClientSocket.connect(host: target, port: port, timeout: timeout)
        let request = Array(
            ("GET \(path) HTTP/1.1\r\nHost: \(authority(host: target, port: port))\r\nUser-Agent: \(agent)\r\n"
                + "Accept: \(accept)\r\nConnection: close\r\n\r\n").utf8)
        if let tls {
            return try tls.exchange(on: socket, request: request, until: marker, limit: limit, deadline: deadline)
        }
        defer { socket.close() }
        try socket.send(request)
        let answer: [UInt8]
        if let marker {
            answer = try socket.receive(until: marker, limit: limit, deadline: deadline)
        } else {
            answer = try socket.receiveAll(limit: limit, deadline: deadline)
        }
        // What plain HTTP to an HTTPS port gets: a TLS record (an alert, 0x15, or a handshake, 0x16, of version 3.x)
        // where an HTTP status line belongs, or a close and no byte (libmicrohttpd's HTTPS port).
        if answer.count >= 2, answer[0] == 0x15 || answer[0] == 0x16, answer[1] == 0x03 { throw .speaksTLS }
        if answer.isEmpty { throw .closedWithoutAnswer }
        return answer
    }

    static let lineEnd = Array("\r\n".utf8)

    /// The status and body of `GET path` (`unicache top`), at most `limit` bytes, over HTTPS when `tls` is set: the
    /// answer is read until the service closes the connection (`Connection: close`).
    public func get(accept: String, limit: Int = 16 << 20) throws(HealthcheckError) -> (status: Int, body: [UInt8]) {
        let answer = try exchange(agent: "unicache-top", accept: accept, until: nil, limit: limit)
        let status = try Self.statusCode(ofResponseHead: answer)
        let separator = Array("\r\n\r\n".utf8)
        guard let end = (0...max(0, answer.count - separator.count)).first(where: {
            answer[$0..<min(answer.count, $0 + separator.count)].elementsEqual(separator)
        }) else { throw .malformedResponse }
        return (status, Array(answer[(end + separator.count)...]))
    }

    /// `HTTP/1.1 200 OK\r\n…` → 200.
    static func statusCode(ofResponseHead head: [UInt8]) throws(HealthcheckError) -> Int {
        guard let lineEnd = head.firstIndex(of: UInt8(ascii: "\r")) else { throw .malformedResponse }
        let parts = String(decoding: head[..<lineEnd], as: UTF8.self).split(separator: " ", maxSplits: 2)
        // Three characters that read as 100 or more are three digits (a sign would leave two).
        guard parts.count >= 2, parts[0].hasPrefix("HTTP/1."), parts[1].count == 3,
            let code = Int(parts[1]), code >= 100
        else { throw .malformedResponse }
        return code
    }
}
