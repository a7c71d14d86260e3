import NIOCore

/// Bounds on what one reply may hold: a reply over a limit is a protocol violation, never unbounded memory. The
/// bounds are the whole reply's, nested arrays included: a peer that streams `*1000000` elements of 64 MiB each is
/// refused once the reply's bytes (or elements) so far pass the bound, not after a million elements each within one.
public struct RESPLimits: Sendable, Hashable {
    /// Most bytes one whole reply may take on the wire, every nested element and framing byte counted.
    public var maxReplyBytes: Int
    /// Most elements one whole reply may hold: the counts of all its arrays, nested ones included, added up.
    public var maxElements: Int
    /// Deepest nesting of arrays.
    public var maxDepth: Int
    /// Longest `+`, `-` or `:` line (bytes, without CRLF).
    public var maxLineLength: Int

    public init(
        maxReplyBytes: Int = 64 << 20, maxElements: Int = 1 << 20, maxDepth: Int = 16, maxLineLength: Int = 64 << 10
    ) {
        self.maxReplyBytes = maxReplyBytes
        self.maxElements = maxElements
        self.maxDepth = maxDepth
        self.maxLineLength = maxLineLength
    }

    /// Throws when a reply would end past `end` bytes from its start.
    func checkBytes(through end: Int) throws(RedisNIOError) {
        guard end <= maxReplyBytes else {
            throw .protocolViolation("a reply of more than \(maxReplyBytes) bytes (the limit of one whole reply)")
        }
    }

    /// Throws when a reply would hold more than `count` elements.
    func checkElements(_ count: Int) throws(RedisNIOError) {
        guard count <= maxElements else {
            throw .protocolViolation("a reply of more than \(maxElements) elements (the limit of one whole reply)")
        }
    }

    /// Throws when an array opens `depth` levels deep (the outermost at 1).
    func checkDepth(_ depth: Int) throws(RedisNIOError) {
        guard depth <= maxDepth else { throw .protocolViolation("arrays nested deeper than \(maxDepth)") }
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
    ) throws(RedisNIOError) -> RESPValue? {
        guard index < bytes.count else { return nil }
        let type = bytes[index]
        var cursor = index + 1
        guard let line = try line(bytes, &cursor) else { return nil }
        try limits.checkBytes(through: cursor)
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
            guard let length = Self.length(bytes, line) else { throw .protocolViolation("bad bulk length") }
            if length == -1 {
                value = .null
            } else {
                try limits.checkBytes(through: cursor + length + 2)
                guard bytes.count - cursor >= length + 2 else { return nil }
                guard bytes[cursor + length] == UInt8(ascii: "\r"), bytes[cursor + length + 1] == UInt8(ascii: "\n") else {
                    throw .protocolViolation("a bulk string does not end with CRLF")
                }
                value = .bulkString(Array(UnsafeRawBufferPointer(rebasing: bytes[cursor..<(cursor + length)])))
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
                var items: [RESPValue] = []
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

    /// A bulk or array length: -1 (null) or more; nil for anything else.
    static func length(_ bytes: UnsafeRawBufferPointer, _ line: Range<Int>) -> Int? {
        guard let value = integer(bytes, line).flatMap({ Int(exactly: $0) }), value >= -1 else { return nil }
        return value
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
/// after every read. The reply's limits are checked as each header arrives (a bulk string's length before its bytes),
/// so the buffer never holds more than one reply's bound; the parser checks the rest when the reply is whole.
struct RESPScanner {
    /// Bytes of the reply under way already scanned (from the buffer's reader index, where the reply starts).
    private var offset = 0
    /// Elements still to come in each array opened so far, outermost first.
    private var remaining: [Int] = []
    /// Elements the reply under way has announced so far, nested arrays' included.
    private var elements = 0

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
            try limits.checkBytes(through: next)
            let type = bytes[cursor]
            switch type {
            case UInt8(ascii: "+"), UInt8(ascii: "-"), UInt8(ascii: ":"):
                break
            case UInt8(ascii: "$"):
                guard let length = RESPParser.length(bytes, line) else { throw .protocolViolation("bad bulk length") }
                if length >= 0 {
                    try limits.checkBytes(through: next + length + 2)
                    guard bytes.count - next >= length + 2 else {
                        offset = cursor
                        return false
                    }
                    next += length + 2
                }
            case UInt8(ascii: "*"):
                guard let count = RESPParser.length(bytes, line) else { throw .protocolViolation("bad array length") }
                if count > 0 {
                    elements += count
                    try limits.checkElements(elements)
                    try limits.checkDepth(remaining.count + 1)
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
                elements = 0
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
