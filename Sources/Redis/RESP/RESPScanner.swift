import NIOCore

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
    mutating func hasWholeReply(_ buffer: ByteBuffer, parser: RESPParser) throws(RedisError) -> Bool {
        try buffer.withUnsafeReadableBytes { bytes throws(RedisError) in try hasWholeReply(bytes, parser: parser) }
    }

    private mutating func hasWholeReply(_ bytes: UnsafeRawBufferPointer, parser: RESPParser) throws(RedisError) -> Bool {
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

/// RESP2 replies off a channel's bytes, for the connection's command handler.
struct RESPDecoder: NIOSingleStepByteToMessageDecoder {
    typealias InboundOut = RedisReply
    let parser: RESPParser
    var scanner = RESPScanner()

    init(parser: RESPParser) { self.parser = parser }

    mutating func decode(buffer: inout ByteBuffer) throws -> RedisReply? {
        guard try scanner.hasWholeReply(buffer, parser: parser) else { return nil }
        return try parser.next(from: &buffer)
    }

    mutating func decodeLast(buffer: inout ByteBuffer, seenEOF: Bool) throws -> RedisReply? {
        try decode(buffer: &buffer)
    }
}
