import NIOCore
@testable import Redis
import Testing

@Suite("RESP2 encoding and decoding")
struct RESPCodecTests {
    @Test func encodesACommandAsAnArrayOfBinarySafeBulkStrings() {
        var buffer = ByteBuffer()
        buffer.writeRESPCommand(RedisCommand("SET", arguments: [[0, 13, 10, 255], Array("42".utf8)]))
        #expect(Array(buffer.readableBytesView) == Array("*3\r\n$3\r\nSET\r\n$4\r\n".utf8) + [0, 13, 10, 255] + Array("\r\n$2\r\n42\r\n".utf8))
    }

    /// A command of one argument and one of a prefix and a key (a shared hit's `GET`) are written, compared and
    /// hashed as the same command made from an array of arguments.
    @Test func encodesOneArgumentAndAPrefixedKeyAsAnArrayWould() {
        let key = "subscription:auth0|abc é"
        let forms = [
            RedisCommand("GET", arguments: [Array("u:{s3}\(key)".utf8)]), .get(Array("u:{s3}\(key)".utf8)),
            .get(Array("u:{s3}".utf8), key), .get([], "u:{s3}\(key)"), .get(Array("u:{s3}\(key)".utf8), ""),
        ]
        for command in forms {
            var buffer = ByteBuffer()
            buffer.writeRESPCommand(command)
            let name = Array("u:{s3}\(key)".utf8)
            let wire = Array("*2\r\n$3\r\nGET\r\n$\(name.count)\r\n".utf8) + name + [13, 10]
            #expect(Array(buffer.readableBytesView) == wire)
            #expect(command == forms[0] && command.hashValue == forms[0].hashValue && command.arguments == [name])
        }
        #expect(RedisCommand.get(Array("u:".utf8), "a") != .get(Array("u:".utf8), "b"))
    }

    /// Counts and lengths of every width: the headers' digits are written in place, lowest first.
    @Test func encodesCountsAndLengthsOfEveryWidth() {
        let lengths = [0, 9, 10, 99, 100, 12_345]
        var arguments = lengths.map { [UInt8](repeating: 120, count: $0) }
        arguments += (0..<4).map { [UInt8(48 + $0)] }  // eleven arguments: a two-digit array count
        var buffer = ByteBuffer()
        buffer.writeRESPCommand(RedisCommand("RPUSH", arguments: arguments))
        var wire = Array("*11\r\n$5\r\nRPUSH\r\n".utf8)
        for argument in arguments { wire += Array("$\(argument.count)\r\n".utf8) + argument + Array("\r\n".utf8) }
        #expect(Array(buffer.readableBytesView) == wire)
    }

    @Test func decodesEveryTypeWithNestingAndNulls() throws {
        let wire = "+OK\r\n-WRONGPASS invalid username-password pair\r\n:-7\r\n$5\r\nhe\r\no\r\n$0\r\n\r\n$-1\r\n*-1\r\n*0\r\n"
            + "*3\r\n:1\r\n*2\r\n$1\r\na\r\n*1\r\n$-1\r\n-ERR x\r\n"
        var buffer = ByteBuffer(string: wire)
        let parser = RESPParser()
        var values: [RedisReply] = []
        while let value = try parser.next(from: &buffer) { values.append(value) }
        #expect(values == [
            .status("OK"), .error(RedisErrorReply(message: "WRONGPASS invalid username-password pair")),
            .integer(-7), .string(Array("he\r\no".utf8)), .string([]), .null, .null, .array([]),
            .array([.integer(1), .array([.string([97]), .array([.null])]), .error(RedisErrorReply(message: "ERR x"))]),
        ])
        #expect(buffer.readableBytes == 0)
    }

    @Test func decodesTheSameRepliesFedOneByteAtATime() throws {
        let wire = Array("*2\r\n$3\r\nfoo\r\n*2\r\n:12345\r\n$-1\r\n+PONG\r\n-NOAUTH Authentication required.\r\n".utf8)
        let parser = RESPParser()
        let (values, unread) = try fedOneByteAtATime(wire) { try parser.next(from: &$0) }
        #expect(values == [
            .array([.string(Array("foo".utf8)), .array([.integer(12345), .null])]), .status("PONG"),
            .error(RedisErrorReply(message: "NOAUTH Authentication required.")),
        ])
        #expect(unread == 0)
    }

    @Test func aPartialReplyConsumesNothing() throws {
        var buffer = ByteBuffer(string: "*2\r\n$3\r\nfoo\r\n$3\r\nba")
        #expect(try RESPParser().next(from: &buffer) == nil)
        #expect(buffer.readableBytes == 19)
    }

    @Test func errorsAreToldApartByTheirPrefix() {
        #expect(RedisErrorReply(message: "WRONGPASS invalid username-password pair or user is disabled.").kind == .wrongPass)
        #expect(RedisErrorReply(message: "NOAUTH Authentication required.").kind == .noAuth)
        #expect(RedisErrorReply(message: "NOPERM this user has no permissions to access one of the keys").kind == .noPerm)
        #expect(RedisErrorReply(message: "READONLY You can't write against a read only replica.").kind == .readOnly)
        #expect(RedisErrorReply(message: "NOSCRIPT No matching script.").kind == .noScript)
        #expect(RedisErrorReply(message: "MOVED 3999 127.0.0.1:6381").kind == .moved)
        #expect(RedisErrorReply(message: "ASK 3999 127.0.0.1:6381").kind == .ask)
        #expect(RedisErrorReply(message: "TRYAGAIN Multiple keys request during rehashing").kind == .tryAgain)
        #expect(RedisErrorReply(message: "ERR unknown command").kind == .err)
        // Redis 7.0 refuses a script's command for the ACL rules with ERR, not NOPERM.
        let script = RedisErrorReply(
            message: "ERR The user executing the script can't publish to the channel mentioned in the command script: 0051")
        #expect(script.kind == .noPerm && script.isAuthenticationError)
        #expect(script.summary == "ERR (the user's ACL rules do not allow the command, key or channel)")
        // The same words further on (an error repeating a key or value) are not a refusal.
        let echoed = "ERR unknown command 'x', with args beginning with: 'The user executing the script can't '"
        #expect(RedisErrorReply(message: echoed).kind == .err)
        #expect(RedisErrorReply(message: "SOMETHINGNEW x").kind == .other)
        #expect(RedisErrorReply(message: "SOMETHINGNEW x").prefix == "SOMETHINGNEW")
        #expect(RedisErrorReply(message: "WRONGPASS x").isAuthenticationError)
    }

    @Test(arguments: [
        ("$11\r\n", "more than 16 bytes"),
        ("*5\r\n", "more than 4 elements"),
        ("*1\r\n*1\r\n*1\r\n*1\r\n:1\r\n", "nested deeper"),
        ("+" + String(repeating: "x", count: 40), "line longer"),
        ("?what\r\n", "unknown reply type"),
        ("$3\r\nabcd\r\n", "CRLF"),
        (":12x\r\n", "not a number"),
    ])
    func repliesOverALimitOrNotRESPAreErrors(wire: String, reason: String) {
        let parser = RESPParser(limits: RESPLimits(maxReplyBytes: 16, maxElements: 4, maxDepth: 3, maxLineLength: 32))
        var buffer = ByteBuffer(string: wire)
        let error = #expect(throws: RedisError.self) { _ = try parser.next(from: &buffer) }
        guard case .protocolViolation(let message)? = error else {
            Issue.record("not a protocol violation: \(String(describing: error))")
            return
        }
        #expect(message.contains(reason), "\(message)")
    }
}
