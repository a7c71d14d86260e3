import Foundation
import TestSupport
#if canImport(Glibc)
import Glibc
#endif

/// What a client sending a request one byte at a time saw.
struct Trickle: Sendable {
    /// Bytes sent before the server closed the connection or answered.
    var sent: Int
    /// From just before the first byte to the close; nil when the server answered instead.
    var closedAfter: Duration?
    /// What the server sent (empty when it closed without an answer).
    var received: [UInt8]
}

/// Clients that take their time, and reading what a server sends until it closes.
extension RawHTTPClient {
    /// Sends `request` one byte every `pace` until the server closes the connection or answers. The pace is the
    /// client's own, not a synchronisation: the outcome is whatever the server does meanwhile.
    static func trickle(port: Int, _ request: String, pace: Duration) async throws -> Trickle {
        try await trickle(on: try await connected(port: port), request, pace: pace)
    }

    /// The same on a socket already connected (so that the server takes it up before connections made after it);
    /// closes it.
    static func trickle(on socket: Int32, _ request: String, pace: Duration) async throws -> Trickle {
        try await onThread { trickleNow(on: socket, request, pace: pace) }.get()
    }

    /// The same, begun on a thread of its own before this returns: the pace starts now, not when a busy
    /// cooperative pool gets round to a child task (a steady client started seconds late looks stalled).
    static func startTrickle(on socket: Int32, _ request: String, pace: Duration) -> ThreadTask<Trickle, RawClientError> {
        ThreadTask { () throws(RawClientError) -> Trickle in try trickleNow(on: socket, request, pace: pace).get() }
    }

    private static func trickleNow(on socket: Int32, _ request: String, pace: Duration)
        -> Result<Trickle, RawClientError> {
        Result { () throws(RawClientError) -> Trickle in
            defer { close(socket) }
            let bytes = Array(request.utf8)
            let clock = ContinuousClock()
            let start = clock.now
            var sent = 0
            while true {
                if sent < bytes.count {
                    let count = bytes[sent...].withUnsafeBytes {
                        Glibc.send(socket, $0.baseAddress, 1, Int32(MSG_NOSIGNAL))
                    }
                    if count < 0 { return Trickle(sent: sent, closedAfter: clock.now - start, received: []) }
                    sent += 1
                }
                // Waits up to the pace (or, once everything is sent, up to 20 s) for an answer or the close.
                var descriptor = pollfd(fd: socket, events: Int16(POLLIN), revents: 0)
                let waitMilliseconds = sent < bytes.count ? Int32(pace / .milliseconds(1)) : 20_000
                guard poll(&descriptor, 1, waitMilliseconds) > 0 else {
                    if sent < bytes.count { continue }
                    throw RawClientError(description: "neither an answer nor a close within 20 s")
                }
                var chunk = [UInt8](repeating: 0, count: 16 << 10)
                let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
                if count <= 0 { return Trickle(sent: sent, closedAfter: clock.now - start, received: []) }
                return Trickle(sent: sent, closedAfter: nil, received: Array(chunk[0..<count]))
            }
        }
    }

    /// Connects, sends `first` (if any) and reads its answer, waits `pause` with the connection open, then sends
    /// `second` and reads the answer: a client that thinks between requests or before its first.
    static func exchange(
        port: Int, first: String?, pause: Duration, then second: String
    ) async throws -> RawResponse {
        let result: Result<RawResponse, RawClientError> = await onThread {
            Result { () throws(RawClientError) -> RawResponse in
                let socket = try connect(port: port)
                defer { close(socket) }
                if let first {
                    try send(socket, Array(first.utf8))
                    _ = try readResponse(socket, expectBody: true, checkClosed: false)
                }
                // The pause is the client's; a server closing the connection meanwhile shows in the second answer.
                var descriptor = pollfd(fd: socket, events: 0, revents: 0)
                _ = poll(&descriptor, 1, Int32(pause / .milliseconds(1)))
                try send(socket, Array(second.utf8))
                return try readResponse(socket, expectBody: true, checkClosed: false)
            }
        }
        return try result.get()
    }

    /// On one thread, so that no stall of the cooperative pool comes between the steps: waits until the server closes
    /// `holder` (at most 20 s), pauses `pause` after that, then sends `rest` on `socket` and reads the answer.
    static func exchange(
        on socket: Int32, afterTheServerCloses holder: Int32, pause: Duration, then rest: String
    ) async throws -> RawResponse {
        let result: Result<RawResponse, RawClientError> = await onThread {
            Result { () throws(RawClientError) -> RawResponse in
                var watched = pollfd(fd: holder, events: Int16(POLLIN), revents: 0)
                var byte: UInt8 = 0
                guard poll(&watched, 1, 20_000) > 0, recv(holder, &byte, 1, Int32(MSG_DONTWAIT)) <= 0 else {
                    throw RawClientError(description: "the holding connection was not closed within 20 s")
                }
                var unwatched = pollfd(fd: -1, events: 0, revents: 0)
                _ = poll(&unwatched, 1, Int32(pause / .milliseconds(1)))
                try send(socket, Array(rest.utf8))
                return try readResponse(socket, expectBody: true, checkClosed: false)
            }
        }
        return try result.get()
    }

    /// Connects and has one request answered, leaving the connection open (idle, kept alive).
    static func keptAlive(port: Int, _ target: String = "/now") async throws(RawClientError) -> Int32 {
        try await onThread { () throws(RawClientError) -> Int32 in
            let socket = try connect(port: port)
            do throws(RawClientError) {
                try send(socket, Array("GET \(target) HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".utf8))
                _ = try readResponse(socket, expectBody: true, checkClosed: false)
                return socket
            } catch {
                close(socket)
                throw error
            }
        }
    }

    /// Whether the server closes `socket` (end of input or a reset) within 20 s, before sending anything.
    static func closedByServer(_ socket: Int32) async -> Bool {
        await closedByServer(oneOf: [socket]) == [socket]
    }

    /// Which of `sockets` the server has closed, once it has closed at least one (or after 20 s: none). All are
    /// watched at once, so a test that cannot know which one the server will choose does not wait out a receive
    /// timeout on the other first.
    static func closedByServer(oneOf sockets: [Int32]) async -> [Int32] {
        await onThread {
            var descriptors = sockets.map { pollfd(fd: $0, events: Int16(POLLIN), revents: 0) }
            guard poll(&descriptors, nfds_t(descriptors.count), 20_000) > 0 else { return [] }
            return descriptors.filter { $0.revents != 0 }.map(\.fd).filter { socket in
                var byte: UInt8 = 0
                let count = recv(socket, &byte, 1, Int32(MSG_DONTWAIT))
                return count == 0 || (count < 0 && errno == ECONNRESET)
            }
        }
    }

    /// Sends `request` and returns every byte the server sends until it closes the connection (for answers whose
    /// framing cannot be trusted).
    static func everythingUntilClosed(port: Int, _ request: String) async throws -> [UInt8] {
        let result: Result<[UInt8], RawClientError> = await onThread {
            Result { () throws(RawClientError) -> [UInt8] in
                let socket = try connect(port: port)
                defer { close(socket) }
                try send(socket, Array(request.utf8))
                var received: [UInt8] = []
                var chunk = [UInt8](repeating: 0, count: 16 << 10)
                while true {
                    let count = chunk.withUnsafeMutableBytes { recv(socket, $0.baseAddress, $0.count, 0) }
                    if count == 0 || (count < 0 && errno == ECONNRESET) { return received }
                    if count < 0 { throw RawClientError(description: "not closed within 20 s (errno \(errno))") }
                    received.append(contentsOf: chunk[0..<count])
                }
            }
        }
        return try result.get()
    }
}
