import NIOCore

/// Bounds on what one reply may hold: a reply over a limit is a protocol violation, never unbounded memory.
public struct RESPLimits: Sendable, Hashable {
    /// Longest bulk string (bytes).
    public var maxBulkLength: Int
    /// Most elements in one array.
    public var maxArrayCount: Int
    /// Deepest nesting of arrays.
    public var maxDepth: Int
    /// Longest `+`, `-` or `:` line (bytes, without CRLF).
    public var maxLineLength: Int

    public init(maxBulkLength: Int = 64 << 20, maxArrayCount: Int = 1 << 20, maxDepth: Int = 16, maxLineLength: Int = 64 << 10) {
        self.maxBulkLength = maxBulkLength
        self.maxArrayCount = maxArrayCount
        self.maxDepth = maxDepth
        self.maxLineLength = maxLineLength
    }
}

/// An incremental RESP2 parser: `next(from:)` takes one whole reply off the buffer, or nothing when the bytes so far
/// are a prefix of one (call again when more arrive).
public struct RESPParser: Sendable {
    public let limits: RESPLimits

    public init(limits: RESPLimits = RESPLimits()) { self.limits = limits }

    /// One reply, consumed from `buffer`; nil (nothing consumed) when the reply is not complete yet.
    /// Throws `RedisNIOError.protocolViolation` for bytes that are not RESP2 or a reply over a limit.
    public func next(from buffer: inout ByteBuffer) throws(RedisNIOError) -> RESPValue? {
        let view = buffer.readableBytesView
        var index = view.startIndex
        guard let value = try parse(view, &index, depth: 0) else { return nil }
        buffer.moveReaderIndex(forwardBy: index - view.startIndex)
        return value
    }

    private func parse(_ view: ByteBufferView, _ index: inout Int, depth: Int) throws(RedisNIOError) -> RESPValue? {
        guard index < view.endIndex else { return nil }
        let type = view[index]
        var cursor = index + 1
        guard let line = try line(view, &cursor) else { return nil }
        let value: RESPValue
        switch type {
        case UInt8(ascii: "+"):
            value = .simpleString(String(decoding: line, as: UTF8.self))
        case UInt8(ascii: "-"):
            value = .error(RedisServerError(message: String(decoding: line, as: UTF8.self)))
        case UInt8(ascii: ":"):
            guard let number = Self.integer(line) else { throw .protocolViolation("an integer reply is not a number") }
            value = .integer(number)
        case UInt8(ascii: "$"):
            guard let length = Self.integer(line).flatMap({ Int(exactly: $0) }), length >= -1 else {
                throw .protocolViolation("bad bulk length")
            }
            if length == -1 {
                value = .null
            } else {
                guard length <= limits.maxBulkLength else {
                    throw .protocolViolation("a bulk string of \(length) bytes is over the limit of \(limits.maxBulkLength)")
                }
                guard view.endIndex - cursor >= length + 2 else { return nil }
                guard view[cursor + length] == UInt8(ascii: "\r"), view[cursor + length + 1] == UInt8(ascii: "\n") else {
                    throw .protocolViolation("a bulk string does not end with CRLF")
                }
                value = .bulkString(Array(view[cursor..<(cursor + length)]))
                cursor += length + 2
            }
        case UInt8(ascii: "*"):
            guard let count = Self.integer(line).flatMap({ Int(exactly: $0) }), count >= -1 else {
                throw .protocolViolation("bad array length")
            }
            if count == -1 {
                value = .null
            } else {
                guard count <= limits.maxArrayCount else {
                    throw .protocolViolation("an array of \(count) elements is over the limit of \(limits.maxArrayCount)")
                }
                guard depth < limits.maxDepth else {
                    throw .protocolViolation("arrays nested deeper than \(limits.maxDepth)")
                }
                var elements: [RESPValue] = []
                elements.reserveCapacity(min(count, 1024))
                for _ in 0..<count {
                    guard let element = try parse(view, &cursor, depth: depth + 1) else { return nil }
                    elements.append(element)
                }
                value = .array(elements)
            }
        default:
            throw .protocolViolation("unknown reply type byte \(type)")
        }
        index = cursor
        return value
    }

    /// The bytes up to CRLF (cursor moved past it); nil when no CRLF yet.
    private func line(_ view: ByteBufferView, _ cursor: inout Int) throws(RedisNIOError) -> ByteBufferView? {
        let searchEnd = min(view.endIndex, cursor + limits.maxLineLength + 2)
        var position = cursor
        while position < searchEnd {
            if view[position] == UInt8(ascii: "\r") {
                guard position + 1 < view.endIndex else { return nil }
                guard view[position + 1] == UInt8(ascii: "\n") else { throw .protocolViolation("CR without LF") }
                let line = view[cursor..<position]
                cursor = position + 2
                return line
            }
            position += 1
        }
        if searchEnd - cursor >= limits.maxLineLength + 2 {
            throw .protocolViolation("a line longer than \(limits.maxLineLength) bytes")
        }
        return nil
    }

    private static func integer(_ line: ByteBufferView) -> Int64? {
        guard !line.isEmpty, line.count <= 20 else { return nil }
        return Int64(String(decoding: line, as: UTF8.self))
    }
}

/// RESP2 replies off a channel's bytes, for the connection's pipeline.
struct RESPDecoder: NIOSingleStepByteToMessageDecoder {
    typealias InboundOut = RESPValue
    let parser: RESPParser

    mutating func decode(buffer: inout ByteBuffer) throws -> RESPValue? {
        try parser.next(from: &buffer)
    }

    mutating func decodeLast(buffer: inout ByteBuffer, seenEOF: Bool) throws -> RESPValue? {
        try decode(buffer: &buffer)
    }
}
