import NIOCore

extension ByteBuffer {
    /// Writes one command as RESP2: an array of bulk strings (`*N\r\n` then `$len\r\nbytes\r\n` for the name and each
    /// argument).
    mutating func writeRESPCommand(_ command: RedisCommand) {
        writeRESPHeader(UInt8(ascii: "*"), command.arguments.count + 1)
        writeRESPHeader(UInt8(ascii: "$"), command.name.utf8.count)
        writeString(command.name)
        writeRESPLineEnd()
        for argument in command.arguments {
            writeRESPHeader(UInt8(ascii: "$"), argument.count)
            writeBytes(argument)
            writeRESPLineEnd()
        }
    }

    /// `*N\r\n` or `$N\r\n` (`count` ≥ 0), its digits written in place: through `String(count)` a header cost ~950
    /// instructions, and a `GET` has three.
    private mutating func writeRESPHeader(_ type: UInt8, _ count: Int) {
        var digits = 1
        var rest = count
        while rest >= 10 {
            rest /= 10
            digits += 1
        }
        writeWithUnsafeMutableBytes(minimumWritableBytes: digits + 3) { out in
            out[0] = type
            var value = count
            var at = digits
            repeat {
                out[at] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: value % 10)
                value /= 10
                at -= 1
            } while at > 0
            out[digits + 1] = UInt8(ascii: "\r")
            out[digits + 2] = UInt8(ascii: "\n")
            return digits + 3
        }
    }

    private mutating func writeRESPLineEnd() {
        writeInteger(UInt16(0x0D0A))  // "\r\n": big-endian, NIO's default
    }
}
