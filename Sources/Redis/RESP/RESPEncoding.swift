import NIOCore

extension ByteBuffer {
    /// Writes one command as RESP2: an array of bulk strings (`*N\r\n` then `$len\r\nbytes\r\n` for the name and each
    /// argument).
    mutating func writeRESPCommand(_ command: RedisCommand) {
        writeRESPHeader(UInt8(ascii: "*"), command.arguments.count + 1)
        writeRESPHeader(UInt8(ascii: "$"), command.name.utf8.count)
        writeString(command.name)
        writeStaticString("\r\n")
        for argument in command.arguments {
            writeRESPHeader(UInt8(ascii: "$"), argument.count)
            writeBytes(argument)
            writeStaticString("\r\n")
        }
    }

    private mutating func writeRESPHeader(_ type: UInt8, _ count: Int) {
        writeInteger(type)
        writeString(String(count))
        writeStaticString("\r\n")
    }
}
