import NIOCore
import Testing

@testable import Redis

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
            .array([.string(Array("foo".utf8)), .array([.integer(12345), .array([])]), .null]), .null,
            .status("PONG"), .array([.array([.array([.string(Array("\r\n".utf8))])]), .integer(7)]),
            .error(RedisErrorReply(message: "NOAUTH Authentication required.")), .string([]),
        ])
        #expect(unread == 0)
    }

    @Test func aLargeArrayArrivingInSmallReadsIsDecodedOnce() throws {
        let count = 100_000
        var wire = ByteBuffer(string: "*\(count)\r\n")
        for index in 0..<count { wire.writeString("$6\r\n\(String(format: "%06d", index))\r\n") }
        var decoder = RESPDecoder(parser: RESPParser())
        var buffer = ByteBuffer()
        var values: [RedisReply] = []
        while wire.readableBytes > 0, let chunk = wire.readSlice(length: min(4096, wire.readableBytes)) {
            buffer.writeImmutableBuffer(chunk)
            while let value = try decoder.decode(buffer: &buffer) { values.append(value) }
        }
        #expect(values.count == 1)
        #expect(values.first?.array?.count == count)
        #expect(values.first?.array?.last == .string(Array("099999".utf8)))
    }

    @Test func oversizedOrNestedTooDeeplyIsAViolationBeforeTheReplyIsWhole() {
        var decoder = RESPDecoder(parser: RESPParser(limits: RESPLimits(maxElements: 4, maxDepth: 2)))
        var tooMany = ByteBuffer(string: "*5\r\n")
        #expect(throws: RedisError.self) { try decoder.decode(buffer: &tooMany) }
        var decoderForDepth = RESPDecoder(parser: RESPParser(limits: RESPLimits(maxElements: 4, maxDepth: 2)))
        var tooDeep = ByteBuffer(string: "*1\r\n*1\r\n*1\r\n")
        #expect(throws: RedisError.self) { try decoderForDepth.decode(buffer: &tooDeep) }
    }

    /// The bound is the whole reply's: nested arrays whose every element is small still add up to it, in bytes and
    /// in elements, and the decoder refuses as soon as a header announces more, before the bytes arrive.
    @Test func nestedElementsCountTowardTheWholeReplysBound() {
        let limits = RESPLimits(maxReplyBytes: 100, maxElements: 6)
        let bulk = "$20\r\n" + String(repeating: "x", count: 20) + "\r\n"
        // Each array of two 26-byte bulks is well within 100 bytes; the reply of two such arrays is not.
        var bytes = ByteBuffer(string: "*2\r\n*2\r\n" + bulk + bulk + "*2\r\n" + bulk + "$20\r\n")
        var decoder = RESPDecoder(parser: RESPParser(limits: limits))
        #expect(violation { try decoder.decode(buffer: &bytes) }?.contains("more than 100 bytes") == true)
        var parsed = ByteBuffer(string: "*2\r\n*2\r\n" + bulk + bulk + "*2\r\n" + bulk + bulk)
        #expect(violation { try RESPParser(limits: limits).next(from: &parsed) }?.contains("more than 100 bytes") == true)

        // Three arrays of three: nine elements, although no array holds more than six.
        var many = ByteBuffer(string: "*3\r\n*2\r\n:1\r\n:2\r\n*2\r\n")
        var counting = RESPDecoder(parser: RESPParser(limits: limits))
        #expect(violation { try counting.decode(buffer: &many) }?.contains("more than 6 elements") == true)

        // Within both bounds, the same shape decodes.
        var fits = ByteBuffer(string: "*2\r\n*1\r\n" + bulk + "*1\r\n" + bulk)
        var decoderThatFits = RESPDecoder(parser: RESPParser(limits: limits))
        #expect((try? decoderThatFits.decode(buffer: &fits))??.array?.count == 2)
    }

    /// The reason of the protocol violation `body` throws; nil when it throws nothing or something else.
    private func violation(_ body: () throws -> RedisReply?) -> String? {
        do {
            _ = try body()
            return nil
        } catch RedisError.protocolViolation(let reason) {
            return reason
        } catch {
            return nil
        }
    }
}
