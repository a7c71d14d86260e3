import Foundation
import HTTPRouting
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// One parsed HTTP/1.1 response from a raw socket.
struct RawResponse: Sendable {
    var status: Int
    var headers: HTTPHeaders
    var body: [UInt8]
    /// The server closed the connection after this response (only checked when asked).
    var closed: Bool

    var text: String { String(decoding: body, as: UTF8.self) }
}

struct RawClientError: Error, CustomStringConvertible {
    var description: String
}

/// A blocking raw-socket HTTP client (to send malformed requests). Each exchange runs on its own thread
/// so that hundreds of them can wait at once without occupying Swift's cooperative pool.
enum RawHTTPClient {
    /// Sends `request` to 127.0.0.1:`port` and reads one response.
    static func exchange(
        port: Int, _ request: String, expectBody: Bool = true, checkClosed: Bool = false
    ) async throws -> RawResponse {
        try await timedExchange(port: port, request, expectBody: expectBody, checkClosed: checkClosed).response
    }

    /// As `exchange`, with the time from connecting to the response's end, measured on the exchange's own thread:
    /// a cooperative pool kept busy by other tests does not count, only the server's answer.
    static func timedExchange(
        port: Int, _ request: String, expectBody: Bool = true, checkClosed: Bool = false
    ) async throws -> (response: RawResponse, took: Duration) {
        let result: Result<(response: RawResponse, took: Duration), RawClientError> = await onThread {
            Result { () throws(RawClientError) -> (response: RawResponse, took: Duration) in
                let clock = ContinuousClock()
                let start = clock.now
                let socket = try connect(port: port)
                defer { close(socket) }
                try send(socket, Array(request.utf8))
                let response = try readResponse(socket, expectBody: expectBody, checkClosed: checkClosed)
                return (response, clock.now - start)
            }
        }
        return try result.get()
    }

    /// A request without a body and with the usual headers.
    static func get(port: Int, _ target: String, method: String = "GET") async throws -> RawResponse {
        try await exchange(
            port: port, "\(method) \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", expectBody: method != "HEAD")
    }

    /// `connect` on a thread of its own (a connection the server leaves in its backlog can block it), then `send` of
    /// `bytes` there too, when given (the start of a request the test leaves under way).
    static func connected(port: Int, sending bytes: [UInt8]? = nil) async throws(RawClientError) -> Int32 {
        try await onThread { () throws(RawClientError) -> Int32 in
            let socket = try connect(port: port)
            guard let bytes else { return socket }
            do throws(RawClientError) {
                try send(socket, bytes)
            } catch {
                close(socket)
                throw error
            }
            return socket
        }
    }

    /// `send`, then `readResponse`, on a thread of their own: a response the server is slow to send (or never
    /// sends) blocks `recv` up to its 20 s timeout, which on the cooperative pool stalls every async test.
    static func response(
        _ socket: Int32, after request: String? = nil, expectBody: Bool = true
    ) async throws(RawClientError) -> RawResponse {
        try await onThread { () throws(RawClientError) -> RawResponse in
            if let request { try send(socket, Array(request.utf8)) }
            return try readResponse(socket, expectBody: expectBody, checkClosed: false)
        }
    }

    /// TestSupport's `onThread`: the blocking calls below must not run on the cooperative pool.
    static func onThread<T: Sendable, E: Error>(_ body: @escaping @Sendable () throws(E) -> T) async throws(E) -> T {
        try await TestSupport.onThread(body)
    }

    static func connect(port: Int) throws(RawClientError) -> Int32 {
        let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard socket >= 0 else { throw RawClientError(description: "socket failed") }
        var timeout = timeval(tv_sec: 20, tv_usec: 0)
        setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = in_port_t(UInt16(port).bigEndian)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        let connected = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                Glibc.connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
            }
        }
        guard connected == 0 else {
            close(socket)
            throw RawClientError(description: "connect failed: errno \(errno)")
        }
        return socket
    }

    static func send(_ socket: Int32, _ bytes: [UInt8]) throws(RawClientError) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { Glibc.send(socket, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if sent < 0 && errno == EINTR { continue }
            guard sent > 0 else { throw RawClientError(description: "send failed: errno \(errno)") }
            offset += sent
        }
    }

    static func readResponse(_ socket: Int32, expectBody: Bool, checkClosed: Bool) throws(RawClientError) -> RawResponse {
        var buffer: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 16 << 10)
        var eof = false
        func fill() throws(RawClientError) {
            var count: Int
            // A signal (a debugger attaching, a profiler) interrupts the wait: ask again.
            repeat {
                count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            } while count < 0 && errno == EINTR
            if count < 0 { throw RawClientError(description: "recv failed: errno \(errno)") }
            if count == 0 { eof = true } else { buffer.append(contentsOf: chunk[0..<count]) }
        }
        var headerEnd = 0
        while true {
            try fill()
            if let end = buffer.firstRange(of: Array("\r\n\r\n".utf8))?.upperBound {
                headerEnd = end
                break
            }
            if eof { throw RawClientError(description: "connection closed before a response") }
        }
        var lines = String(decoding: buffer[0..<headerEnd], as: UTF8.self)
            .components(separatedBy: "\r\n").filter { !$0.isEmpty }
        let statusLine = lines.removeFirst().split(separator: " ")
        guard statusLine.count >= 2, let status = Int(statusLine[1]) else {
            throw RawClientError(description: "bad status line")
        }
        var headers = HTTPHeaders()
        for line in lines {
            guard let colon = line.firstIndex(of: ":") else { continue }
            headers.add(
                name: String(line[..<colon]),
                value: line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces))
        }
        let length = expectBody ? Int(headers["Content-Length"] ?? "0") ?? 0 : 0
        while buffer.count - headerEnd < length && !eof { try fill() }
        let body = Array(buffer[headerEnd..<min(buffer.count, headerEnd + length)])
        if checkClosed && !eof && buffer.count == headerEnd + length {
            var short = timeval(tv_sec: 2, tv_usec: 0)
            setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &short, socklen_t(MemoryLayout<timeval>.size))
            let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
            eof = count == 0 || (count < 0 && errno == ECONNRESET)
        }
        return RawResponse(status: status, headers: headers, body: body, closed: eof)
    }
}
