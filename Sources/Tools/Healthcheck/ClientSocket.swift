import Clocks

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// A connected, blocking TCP socket whose every call gives up after the timeout (SO_SNDTIMEO/SO_RCVTIMEO).
struct ClientSocket {
    let fileDescriptor: Int32

    static func connect(host: String, port: Int, timeout: Duration) throws(HealthcheckError) -> ClientSocket {
        var hints = addrinfo()
        hints.ai_family = AF_UNSPEC
        hints.ai_socktype = streamSocketType
        hints.ai_flags = AI_NUMERICSERV
        var list: UnsafeMutablePointer<addrinfo>?
        let status = getaddrinfo(host, String(port), &hints, &list)
        guard status == 0, let first = list else {
            throw .resolve(host: host, reason: String(cString: gai_strerror(status)))
        }
        defer { freeaddrinfo(first) }
        var failure = HealthcheckError.connect("no address")
        var current: UnsafeMutablePointer<addrinfo>? = first
        while let info = current?.pointee {
            current = info.ai_next
            let fd = socket(info.ai_family, info.ai_socktype, info.ai_protocol)
            guard fd >= 0 else {
                failure = .connect(errorText(errno))
                continue
            }
            setTimeout(fd, option: SO_SNDTIMEO, timeout)  // On Linux this bounds connect(2) too.
            setTimeout(fd, option: SO_RCVTIMEO, timeout)
            if systemConnect(fd, info.ai_addr, info.ai_addrlen) == 0 {
                return ClientSocket(fileDescriptor: fd)
            }
            let code = errno
            failure = code == EINPROGRESS || code == EAGAIN || code == ETIMEDOUT ? .timeout : .connect(errorText(code))
            systemClose(fd)
        }
        throw failure
    }

    func send(_ bytes: [UInt8]) throws(HealthcheckError) {
        var offset = 0
        while offset < bytes.count {
            let sent = bytes[offset...].withUnsafeBytes { buffer in
                systemSend(fileDescriptor, buffer.baseAddress, buffer.count, noSignalFlag)
            }
            if sent > 0 {
                offset += sent
                continue
            }
            let code = errno
            if sent < 0 && code == EINTR { continue }
            throw code == EAGAIN || code == EWOULDBLOCK ? .timeout : .io(errorText(code))
        }
    }

    /// Bytes read until `marker` has arrived, the peer closed, `limit` bytes were read, or the deadline passed.
    func receive(until marker: [UInt8], limit: Int, deadline: ContinuousClock.Instant) throws(HealthcheckError) -> [UInt8] {
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1024)
        while received.count < limit, !Self.contains(received, marker) {
            guard ContinuousClock.now < deadline else { throw .timeout }
            let count = chunk.withUnsafeMutableBytes { buffer in
                systemReceive(fileDescriptor, buffer.baseAddress, buffer.count, 0)
            }
            if count > 0 {
                received += chunk[..<count]
            } else if count == 0 {
                break
            } else {
                let code = errno
                if code == EINTR { continue }
                throw code == EAGAIN || code == EWOULDBLOCK ? .timeout : .io(errorText(code))
            }
        }
        return received
    }

    /// Every byte until the peer closes, at most `limit` (more is an error), within the deadline.
    func receiveAll(limit: Int, deadline: ContinuousClock.Instant) throws(HealthcheckError) -> [UInt8] {
        var received: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 65536)
        while true {
            guard ContinuousClock.now < deadline else { throw .timeout }
            let count = chunk.withUnsafeMutableBytes { buffer in
                systemReceive(fileDescriptor, buffer.baseAddress, buffer.count, 0)
            }
            if count > 0 {
                received += chunk[..<count]
                guard received.count <= limit else { throw .io("answer larger than \(limit) bytes") }
            } else if count == 0 {
                return received
            } else {
                let code = errno
                if code == EINTR { continue }
                throw code == EAGAIN || code == EWOULDBLOCK ? .timeout : .io(errorText(code))
            }
        }
    }

    func close() {
        systemClose(fileDescriptor)
    }

    static func contains(_ bytes: [UInt8], _ marker: [UInt8]) -> Bool {
        guard bytes.count >= marker.count else { return false }
        return (0...(bytes.count - marker.count)).contains { bytes[$0..<($0 + marker.count)].elementsEqual(marker) }
    }

    private static func setTimeout(_ fd: Int32, option: Int32, _ timeout: Duration) {
        let (seconds, microseconds) = timeout.secondsAndMicroseconds
        var value = timeval()
        value.tv_sec = .init(max(0, seconds))
        value.tv_usec = .init(max(0, microseconds))
        if value.tv_sec == 0 && value.tv_usec == 0 { value.tv_usec = 1 }  // 0 would mean "no timeout".
        _ = setsockopt(fd, SOL_SOCKET, option, &value, socklen_t(MemoryLayout<timeval>.size))
    }
}

private func errorText(_ code: Int32) -> String {
    String(cString: strerror(code))
}

#if canImport(Glibc)
private let streamSocketType = Int32(SOCK_STREAM.rawValue)
private let noSignalFlag = Int32(MSG_NOSIGNAL)
#elseif canImport(Musl)
private let streamSocketType = SOCK_STREAM
private let noSignalFlag = Int32(MSG_NOSIGNAL)
#else
private let streamSocketType = SOCK_STREAM
private let noSignalFlag: Int32 = 0
#endif

// The C calls under names of their own: inside `ClientSocket`, `connect`, `send` and `close` would name its methods.
private func systemConnect(_ fd: Int32, _ address: UnsafePointer<sockaddr>!, _ length: socklen_t) -> Int32 {
    connect(fd, address, length)
}
private func systemSend(_ fd: Int32, _ buffer: UnsafeRawPointer?, _ count: Int, _ flags: Int32) -> Int {
    send(fd, buffer, count, flags)
}
private func systemReceive(_ fd: Int32, _ buffer: UnsafeMutableRawPointer?, _ count: Int, _ flags: Int32) -> Int {
    recv(fd, buffer, count, flags)
}
private func systemClose(_ fd: Int32) { _ = close(fd) }
