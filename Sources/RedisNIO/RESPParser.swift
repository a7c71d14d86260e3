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
        let parsed = try buffer.withUnsafeReadableBytes { bytes throws(RedisNIOError) -> (RESPValue, Int)? in
            var index = 0
            guard let value = try parse(bytes, &index, depth: 0) else { return nil }
            return (value, index)
        }
        guard let (value, consumed) = parsed else { return nil }
        buffer.moveReaderIndex(forwardBy: consumed)
        return value
    }

    private func parse(_ bytes: UnsafeRawBufferPointer, _ index: inout Int, depth: Int) throws(RedisNIOError) -> RESPValue? {
        guard index < bytes.count else { return nil }
        let type = bytes[index]
        var cursor = index + 1
        guard let line = try line(bytes, &cursor) else { return nil }
        let value: RESPValue
        switch type {
        case UInt8(ascii: "+"):
            value = .simpleString(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[line]), as: UTF8.self))
        case UInt8(ascii: "-"):
            value = .error(RedisServerError(message: String(decoding: UnsafeRawBufferPointer(rebasing: bytes[line]), as: UTF8.self)))
        case UInt8(ascii: ":"):
            guard let number = Self.integer(bytes, line) else { throw .protocolViolation("an integer reply is not a number") }
            value = .integer(number)
        case UInt8(ascii: "$"):
            guard let length = Self.integer(bytes, line).flatMap({ Int(exactly: $0) }), length >= -1 else {
                throw .protocolViolation("bad bulk length")
            }
            if length == -1 {
                value = .null
            } else {
                guard length <= limits.maxBulkLength else {
                    throw .protocolViolation("a bulk string of \(length) bytes is over the limit of \(limits.maxBulkLength)")
                }
                guard bytes.count - cursor >= length + 2 else { return nil }
                guard bytes[cursor + length] == UInt8(ascii: "\r"), bytes[cursor + length + 1] == UInt8(ascii: "\n") else {
                    throw .protocolViolation("a bulk string does not end with CRLF")
                }
                value = .bulkString(Array(UnsafeRawBufferPointer(rebasing: bytes[cursor..<(cursor + length)])))
                cursor += length + 2
            }
        case UInt8(ascii: "*"):
            guard let count = Self.integer(bytes, line).flatMap({ Int(exactly: $0) }), count >= -1 else {
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
                    guard let element = try parse(bytes, &cursor, depth: depth + 1) else { return nil }
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

    /// The range of the bytes up to CRLF (cursor moved past it); nil when no CRLF yet.
    func line(_ bytes: UnsafeRawBufferPointer, _ cursor: inout Int) throws(RedisNIOError) -> Range<Int>? {
        let searchEnd = min(bytes.count, cursor + limits.maxLineLength + 2)
        var position = cursor
        while position < searchEnd {
            if bytes[position] == UInt8(ascii: "\r") {
                guard position + 1 < bytes.count else { return nil }
                guard bytes[position + 1] == UInt8(ascii: "\n") else { throw .protocolViolation("CR without LF") }
                let line = cursor..<position
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

    /// A decimal integer with an optional `-`, at most 19 digits; nil for anything else.
    static func integer(_ bytes: UnsafeRawBufferPointer, _ line: Range<Int>) -> Int64? {
        var index = line.lowerBound
        let negative = index < line.upperBound && bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        guard index < line.upperBound, line.upperBound - index <= 19 else { return nil }
        var value: Int64 = 0
        while index < line.upperBound {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            value = value &* 10 &+ Int64(digit)
            guard value >= 0 else { return nil }
            index += 1
        }
        return negative ? -value : value
    }
}

/// Whether the bytes so far hold a whole reply, found without building it and resumed where the last look stopped:
/// a large reply (an `XRANGE` of 100,000 entries) arriving in many reads is scanned once, not again from its start
/// after every read. Only limits and framing are checked here; the parser checks the rest when the reply is whole.
struct RESPScanner {
    /// Bytes of the reply under way already scanned (from the buffer's reader index).
    private var offset = 0
    /// Elements still to come in each array opened so far, outermost first.
    private var remaining: [Int] = []

    /// True when the buffer starts with a whole reply (the scanner is then ready for the next one).
    mutating func hasWholeReply(_ buffer: ByteBuffer, parser: RESPParser) throws(RedisNIOError) -> Bool {
        try buffer.withUnsafeReadableBytes { bytes throws(RedisNIOError) in try hasWholeReply(bytes, parser: parser) }
    }

    private mutating func hasWholeReply(_ bytes: UnsafeRawBufferPointer, parser: RESPParser) throws(RedisNIOError) -> Bool {
        let limits = parser.limits
        var cursor = offset
        while true {
            guard cursor < bytes.count else { break }
            var next = cursor + 1
            guard let line = try parser.line(bytes, &next) else { break }
            let type = bytes[cursor]
            switch type {
            case UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: ":"):
                break
            case UInt8(ascii: "$"):
                guard let length = RESPParser.integer(bytes, line).flatMap({ Int(exactly: $0) }), length >= -1,
                    length <= limits.maxBulkLength
                else { throw .protocolViolation("bad or oversized bulk length") }
                if length >= 0 {
                    guard bytes.count - next >= length + 2 else {
                        offset = cursor
                        return false
                    }
                    next += length + 2
                }
            case UInt8(ascii: "*"):
                guard let count = RESPParser.integer(bytes, line).flatMap({ Int(exactly: $0) }), count >= -1,
                    count <= limits.maxArrayCount, remaining.count < limits.maxDepth
                else { throw .protocolViolation("bad, oversized or too deeply nested array") }
                if count > 0 {
                    remaining.append(count)
                    cursor = next
                    continue
                }
            default:
                throw .protocolViolation("unknown reply type byte \(type)")
            }
            cursor = next
            // One element is whole: close the arrays it completes.
            while let last = remaining.indices.last {
                remaining[last] -= 1
                guard remaining[last] == 0 else { break }
                remaining.removeLast()
            }
            if remaining.isEmpty {
                offset = 0
                return true
            }
        }
        offset = cursor
        return false
    }
}

/// RESP2 replies off a channel's bytes, for the connection's pipeline.
struct RESPDecoder: NIOSingleStepByteToMessageDecoder {
    typealias InboundOut = RESPValue
    let parser: RESPParser
    var scanner = RESPScanner()

    init(parser: RESPParser) { self.parser = parser }

    mutating func decode(buffer: inout ByteBuffer) throws -> RESPValue? {
        guard try scanner.hasWholeReply(buffer, parser: parser) else { return nil }
        return try parser.next(from: &buffer)
    }

    mutating func decodeLast(buffer: inout ByteBuffer, seenEOF: Bool) throws -> RESPValue? {
        try decode(buffer: &buffer)
    }
}
