import NIOCore
import Testing

@testable import RedisNIO

/// The channel's decoder finds a whole reply by a scan resumed where the last read stopped (a large reply is not
/// parsed again from its start after every read), and yields exactly what the parser makes of the same bytes.
@Suite("RESP2 decoding off a channel")
struct RESPDecoderTests {
    @Test func theSameRepliesFedOneByteAtATimeComeOutWholeAndOnlyWhenWhole() throws {
        let wire = Array(
            ("*3\r\n$3\r\nfoo\r\n*2\r\n:12345\r\n*0\r\n*-1\r\n$-1\r\n+PONG\r\n*2\r\n*1\r\n*1\r\n$2\r\n\r\n\r\n:7\r\n"
                + "-NOAUTH Authentication required.\r\n$0\r\n\r\n").utf8)
        var decoder = RESPDecoder(parser: RESPParser())
        let (values, unread) = try fedOneByteAtATime(wire) { try decoder.decode(buffer: &$0) }
        #expect(values == [
            .array([.bulkString(Array("foo".utf8)), .array([.integer(12345), .array([])]), .null]), .null,
            .simpleString("PONG"), .array([.array([.array([.bulkString(Array("\r\n".utf8))])]), .integer(7)]),
            .error(RedisServerError(message: "NOAUTH Authentication required.")), .bulkString([]),
        ])
        #expect(unread == 0)
    }

    @Test func aLargeArrayArrivingInSmallReadsIsDecodedOnce() throws {
        let count = 100_000
        var wire = ByteBuffer(string: "*\(count)\r\n")
        for index in 0..<count { wire.writeString("$6\r\n\(String(format: "%06d", index))\r\n") }
        var decoder = RESPDecoder(parser: RESPParser())
        var buffer = ByteBuffer()
        var values: [RESPValue] = []
        while wire.readableBytes > 0, let chunk = wire.readSlice(length: min(4096, wire.readableBytes)) {
            buffer.writeImmutableBuffer(chunk)
            while let value = try decoder.decode(buffer: &buffer) { values.append(value) }
        }
        #expect(values.count == 1)
        #expect(values.first?.array?.count == count)
        #expect(values.first?.array?.last == .bulkString(Array("099999".utf8)))
    }

    @Test func oversizedOrNestedTooDeeplyIsAViolationBeforeTheReplyIsWhole() {
        var decoder = RESPDecoder(parser: RESPParser(limits: RESPLimits(maxArrayCount: 4, maxDepth: 2)))
        var tooMany = ByteBuffer(string: "*5\r\n")
        #expect(throws: RedisNIOError.self) { try decoder.decode(buffer: &tooMany) }
        var decoderForDepth = RESPDecoder(parser: RESPParser(limits: RESPLimits(maxArrayCount: 4, maxDepth: 2)))
        var tooDeep = ByteBuffer(string: "*1\r\n*1\r\n*1\r\n")
        #expect(throws: RedisNIOError.self) { try decoderForDepth.decode(buffer: &tooDeep) }
    }
}
