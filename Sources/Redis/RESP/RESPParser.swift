import NIOCore

/// An incremental RESP2 parser: `next(from:)` takes one whole reply off the buffer, or nothing when the bytes so far
/// are a prefix of one (call again when more arrive).
package struct RESPParser: Sendable {
    public let limits: RESPLimits

    public init(limits: RESPLimits = RESPLimits()) { self.limits = limits }

    /// One reply, consumed from `buffer`; nil (nothing consumed) when the reply is not complete yet.
    /// Throws `RedisError.protocolViolation` for bytes that are not RESP2 or a reply over a limit.
    public func next(from buffer: inout ByteBuffer) throws(RedisError) -> RedisReply? {
        let parsed = try buffer.withUnsafeReadableBytes { bytes throws(RedisError) -> (RedisReply, Int)? in
            var index = 0
            var elements = 0
            guard let value = try parse(bytes, &index, depth: 0, elements: &elements) else { return nil }
            return (value, index)
        }
        guard let (value, consumed) = parsed else { return nil }
        buffer.moveReaderIndex(forwardBy: consumed)
        return value
    }

    /// One value from `index` (the reply starts at 0); `elements`: the reply's elements so far.
    private func parse(
        _ bytes: UnsafeRawBufferPointer, _ index: inout Int, depth: Int, elements: inout Int
    ) throws(RedisError) -> RedisReply? {
        guard index < bytes.count else { return nil }
        let type = bytes[index]
        var cursor = index + 1
        guard let line = try line(bytes, &cursor) else { return nil }
        try limits.checkBytes(through: cursor)
        let value: RedisReply
        switch type {
        case UInt8(ascii: "+"):
            value = .status(String(decoding: UnsafeRawBufferPointer(rebasing: bytes[line]), as: UTF8.self))
        case UInt8(ascii: "-"):
            value = .error(RedisErrorReply(message: String(decoding: UnsafeRawBufferPointer(rebasing: bytes[line]), as: UTF8.self)))
        case UInt8(ascii: ":"):
            guard let number = Self.integer(bytes, line) else { throw .protocolViolation("an integer reply is not a number") }
            value = .integer(number)
        case UInt8(ascii: "$"):
            guard let length = Self.length(bytes, line) else { throw .protocolViolation("bad bulk length") }
            if length == -1 {
                value = .null
            } else {
                try limits.checkBytes(through: cursor + length + 2)
                guard bytes.count - cursor >= length + 2 else { return nil }
                guard bytes[cursor + length] == UInt8(ascii: "\r"), bytes[cursor + length + 1] == UInt8(ascii: "\n") else {
                    throw .protocolViolation("a bulk string does not end with CRLF")
                }
                value = .string(Array(UnsafeRawBufferPointer(rebasing: bytes[cursor..<(cursor + length)])))
                cursor += length + 2
            }
        case UInt8(ascii: "*"):
            guard let count = Self.length(bytes, line) else { throw .protocolViolation("bad array length") }
            if count == -1 {
                value = .null
            } else {
                elements += count
                try limits.checkElements(elements)
                try limits.checkDepth(depth + 1)
                var items: [RedisReply] = []
                items.reserveCapacity(min(count, 1024))
                for _ in 0..<count {
                    guard let item = try parse(bytes, &cursor, depth: depth + 1, elements: &elements) else { return nil }
                    items.append(item)
                }
                value = .array(items)
            }
        default:
            throw .protocolViolation("unknown reply type byte \(type)")
        }
        index = cursor
        return value
    }

    /// The range of the bytes up to CRLF (cursor moved past it); nil when no CRLF yet.
    func line(_ bytes: UnsafeRawBufferPointer, _ cursor: inout Int) throws(RedisError) -> Range<Int>? {
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

    /// A bulk or array length: -1 (null) or more; nil for anything else.
    static func length(_ bytes: UnsafeRawBufferPointer, _ line: Range<Int>) -> Int? {
        guard let value = integer(bytes, line), value >= -1 else { return nil }
        return value
    }

    /// A decimal integer with an optional `-`, at most 19 digits; nil for anything else.
    static func integer(_ bytes: UnsafeRawBufferPointer, _ line: Range<Int>) -> Int? {
        var index = line.lowerBound
        let negative = index < line.upperBound && bytes[index] == UInt8(ascii: "-")
        if negative { index += 1 }
        guard index < line.upperBound, line.upperBound - index <= 19 else { return nil }
        var value = 0
        while index < line.upperBound {
            let digit = bytes[index] &- UInt8(ascii: "0")
            guard digit < 10 else { return nil }
            value = value &* 10 &+ Int(digit)
            guard value >= 0 else { return nil }
            index += 1
        }
        return negative ? -value : value
    }
}
