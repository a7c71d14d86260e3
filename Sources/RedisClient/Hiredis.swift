import CHiredis

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

// The only file that calls hiredis. A `HiredisContext` is owned by one thread at a time (hiredis
// contexts are not thread-safe), so it is deliberately not Sendable.

/// One hiredis connection. Freed on deinit. After any I/O error (`isBroken`) it must be dropped.
final class HiredisContext {
    private let context: UnsafeMutablePointer<redisContext>

    private init(_ context: UnsafeMutablePointer<redisContext>) {
        self.context = context
    }

    deinit {
        redisFree(context)
    }

    /// A blocking connection: connect bounded by `timeout`, then every read and write bounded by
    /// `timeout` too (SO_RCVTIMEO / SO_SNDTIMEO). Fails with hiredis' reason.
    static func connectBlocking(host: String, port: Int, timeout: Duration) -> Result<HiredisContext, HiredisFailure> {
        guard let raw = redisConnectWithTimeout(host, Int32(port), makeTimeval(timeout)) else {
            return .failure(HiredisFailure(message: "cannot allocate a hiredis context", timedOut: false))
        }
        let context = HiredisContext(raw)
        if let failure = context.failure(timeout: timeout) { return .failure(failure) }
        guard redisSetTimeout(raw, makeTimeval(timeout)) == REDIS_OK else {
            return .failure(context.failure(timeout: timeout)
                ?? HiredisFailure(message: "cannot set the socket timeout", timedOut: false))
        }
        context.prepareSocket()
        return .success(context)
    }

    /// A non-blocking connection whose connect may still be in progress: wait until `descriptor`
    /// is writable, then check `pendingConnectError()`.
    static func connectNonBlocking(host: String, port: Int) -> Result<HiredisContext, HiredisFailure> {
        guard let raw = redisConnectNonBlock(host, Int32(port)) else {
            return .failure(HiredisFailure(message: "cannot allocate a hiredis context", timedOut: false))
        }
        let context = HiredisContext(raw)
        if let failure = context.failure(timeout: nil) { return .failure(failure) }
        context.prepareSocket()
        return .success(context)
    }

    /// TCP keep-alive, and close-on-exec so a spawned process does not keep the connection open
    /// (hiredis 0.14 creates its sockets without SOCK_CLOEXEC).
    private func prepareSocket() {
        _ = redisEnableKeepAlive(context)
        _ = fcntl(context.pointee.fd, F_SETFD, FD_CLOEXEC)
    }

    /// The socket, for poll(2).
    var descriptor: Int32 { context.pointee.fd }

    /// Whether hiredis recorded an error: the context can never be used again.
    var isBroken: Bool { context.pointee.err != 0 }

    /// The error of a non-blocking connect (SO_ERROR), once the socket became writable.
    func pendingConnectError() -> String? {
        var code: Int32 = 0
        var length = socklen_t(MemoryLayout<Int32>.size)
        if getsockopt(descriptor, SOL_SOCKET, SO_ERROR, &code, &length) != 0 {
            return errorDescription(errno)
        }
        return code == 0 ? nil : errorDescription(code)
    }

    /// hiredis' error, with a blocking read or write that hit SO_RCVTIMEO/SO_SNDTIMEO reported as a
    /// timeout (hiredis 0.14 then says "Resource temporarily unavailable").
    func failure(timeout: Duration?) -> HiredisFailure? {
        guard context.pointee.err != 0 else { return nil }
        let text = withUnsafeBytes(of: context.pointee.errstr) { raw in
            String(decoding: raw.prefix { $0 != 0 }, as: UTF8.self)
        }
        if let timeout, context.pointee.err == REDIS_ERR_IO,
            text == errorDescription(EAGAIN) || text == errorDescription(EWOULDBLOCK)
        {
            return HiredisFailure(message: "timed out after \(timeout.shortDescription)", timedOut: true)
        }
        return HiredisFailure(message: text.isEmpty ? "unknown hiredis error" : text, timedOut: false)
    }

    /// Appends one command (binary safe) to the output buffer; nothing is sent yet.
    func append(_ arguments: [[UInt8]]) -> Bool {
        let total = arguments.reduce(0) { $0 + $1.count }
        // One contiguous copy of every argument; argv points into it.
        let storage = UnsafeMutableRawBufferPointer.allocate(byteCount: max(total, 1), alignment: 1)
        defer { storage.deallocate() }
        var pointers: [UnsafePointer<CChar>?] = []
        var lengths: [Int] = []
        pointers.reserveCapacity(arguments.count)
        lengths.reserveCapacity(arguments.count)
        var offset = 0
        for argument in arguments {
            let start = storage.baseAddress! + offset
            argument.withUnsafeBytes { bytes in
                if let source = bytes.baseAddress, bytes.count > 0 {
                    start.copyMemory(from: source, byteCount: bytes.count)
                }
            }
            pointers.append(UnsafePointer(start.assumingMemoryBound(to: CChar.self)))
            lengths.append(argument.count)
            offset += argument.count
        }
        return pointers.withUnsafeMutableBufferPointer { argv in
            lengths.withUnsafeBufferPointer { argvlen in
                redisAppendCommandArgv(context, Int32(arguments.count), argv.baseAddress, argvlen.baseAddress)
            }
        } == REDIS_OK
    }

    /// Blocking: flushes the output buffer if needed and reads the next reply. nil on failure
    /// (then `isBroken` and `failure(timeout:)` tell why).
    func nextReply() -> RedisReply? {
        var raw: UnsafeMutableRawPointer?
        guard redisGetReply(context, &raw) == REDIS_OK, let raw else { return nil }
        return Self.take(raw)
    }

    /// Non-blocking: writes what the output buffer holds. Returns whether all was written, nil on error.
    func flush() -> Bool? {
        var done: Int32 = 0
        guard redisBufferWrite(context, &done) == REDIS_OK else { return nil }
        return done != 0
    }

    /// Non-blocking: one read(2) into the reader (call after poll said readable). false on error or EOF.
    func readIntoBuffer() -> Bool {
        redisBufferRead(context) == REDIS_OK
    }

    /// A complete reply already in the reader, if any; .failure on a protocol error.
    func bufferedReply() -> Result<RedisReply?, HiredisFailure> {
        var raw: UnsafeMutableRawPointer?
        guard redisGetReplyFromReader(context, &raw) == REDIS_OK else {
            return .failure(failure(timeout: nil) ?? HiredisFailure(message: "protocol error", timedOut: false))
        }
        guard let raw else { return .success(nil) }
        return .success(Self.take(raw))
    }

    /// Converts and frees a reply.
    private static func take(_ raw: UnsafeMutableRawPointer) -> RedisReply {
        defer { freeReplyObject(raw) }
        return convert(raw.assumingMemoryBound(to: redisReply.self))
    }

    private static func convert(_ reply: UnsafeMutablePointer<redisReply>) -> RedisReply {
        let value = reply.pointee
        let bytes = { Array(UnsafeRawBufferPointer(start: value.str, count: value.str == nil ? 0 : value.len)) }
        switch value.type {
        case REDIS_REPLY_STRING:
            return .string(bytes())
        case REDIS_REPLY_STATUS:
            return .status(String(decoding: bytes(), as: UTF8.self))
        case REDIS_REPLY_ERROR:
            return .error(String(decoding: bytes(), as: UTF8.self))
        case REDIS_REPLY_INTEGER:
            return .integer(Int(value.integer))
        case REDIS_REPLY_NIL:
            return .null
        case REDIS_REPLY_ARRAY:
            guard let elements = value.element else { return .array([]) }
            return .array((0..<value.elements).map { index in
                elements[index].map(convert) ?? .null
            })
        default:
            return .error("ERR unknown hiredis reply type \(value.type)")
        }
    }
}

/// Why hiredis could not do something (never contains a password: hiredis' own texts and ours).
struct HiredisFailure: Error, Sendable {
    var message: String
    var timedOut: Bool
}
