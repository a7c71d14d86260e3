import Foundation
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A listening socket on 127.0.0.1, port 0, that serves one connection from its own thread:
/// it records the request line, then writes `answer` (or, when `nil`, never answers and waits for the client to go).
/// Only the server's thread closes the listener, so its descriptor number cannot be reused under a pending `accept`.
final class TinyHTTPServer: Sendable {
    enum SetupError: Error { case socket(String) }

    let port: Int
    private let listener: Int32
    /// `true` until the serving thread closed the listener; `stop()` only shuts it down while it is open.
    private let listenerOpen = NIOLockedValueBox(true)
    private let received = NIOLockedValueBox<String?>(nil)

    /// The first line of the request the server got, once it answered.
    var requestLine: String? { received.withLockedValue { $0 } }

    init(answer: String?) throws {
        (listener, port) = try Self.boundSocket(listening: true)
        Thread.detachNewThread { [self] in
            let connection = accept(listener, nil, nil)
            listenerOpen.withLockedValue { open in
                close(listener)
                open = false
            }
            guard connection >= 0 else { return }
            defer { close(connection) }
            let request = Self.readRequestHead(connection)
            if let answer {
                received.withLockedValue { $0 = request.split(separator: "\r\n").first.map(String.init) }
                let bytes = Array(answer.utf8)
                _ = bytes.withUnsafeBytes { send(connection, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            } else {
                var byte: UInt8 = 0
                while recv(connection, &byte, 1, 0) > 0 {}  // until the client gives up and closes
            }
        }
    }

    /// Stops listening if no connection came (wakes the pending `accept`, which then closes the listener).
    func stop() {
        listenerOpen.withLockedValue { open in
            if open { shutdown(listener, Int32(SHUT_RDWR)) }
        }
    }

    /// A port on 127.0.0.1 that was free a moment ago and has nothing listening.
    static func unusedPort() throws -> Int {
        let (fd, port) = try boundSocket(listening: false)
        close(fd)
        return port
    }

    private static func boundSocket(listening: Bool) throws -> (Int32, Int) {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        guard fd >= 0 else { throw SetupError.socket("socket") }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_port = 0
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        var length = socklen_t(MemoryLayout<sockaddr_in>.size)
        let bound = withUnsafeMutablePointer(to: &address) { pointer in
            pointer.withMemoryRebound(to: sockaddr.self, capacity: 1) { socketAddress in
                bind(fd, socketAddress, length) == 0 && (!listening || listen(fd, 4) == 0)
                    && getsockname(fd, socketAddress, &length) == 0
            }
        }
        guard bound else {
            close(fd)
            throw SetupError.socket("bind/listen")
        }
        return (fd, Int(UInt16(bigEndian: address.sin_port)))
    }

    private static func readRequestHead(_ connection: Int32) -> String {
        var head: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 512)
        while !String(decoding: head, as: UTF8.self).contains("\r\n\r\n") {
            let count = chunk.withUnsafeMutableBytes { recv(connection, $0.baseAddress, $0.count, 0) }
            guard count > 0 else { break }
            head += chunk[..<count]
        }
        return String(decoding: head, as: UTF8.self)
    }
}
