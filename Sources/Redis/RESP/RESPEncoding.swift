import NIOCore

extension ByteBuffer {
    /// Writes one command as RESP2: an array of bulk strings (`*N\r\n` then `$len\r\nbytes\r\n` for each argument).
    public mutating func writeRESPCommand(_ arguments: [RESPArgument]) {
        writeRESPHeader(UInt8(ascii: "*"), arguments.count)
        for argument in arguments {
            writeRESPHeader(UInt8(ascii: "$"), argument.bytes.count)
            writeBytes(argument.bytes)
            writeStaticString("\r\n")
        }
    }

    private mutating func writeRESPHeader(_ type: UInt8, _ count: Int) {
        writeInteger(type)
        writeString(String(count))
        writeStaticString("\r\n")
    }
}
