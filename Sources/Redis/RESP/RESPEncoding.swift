import NIOCore

extension ByteBuffer {
    /// Writes one command as RESP2: an array of bulk strings (`*N\r\n` then `$len\r\nbytes\r\n` for the name and each
    /// argument), measured first and then written in one step: a write per part cost ~1,500 instructions a `GET`.
    mutating func writeRESPCommand(_ command: RedisCommand) {
        var name = command.name
        name.withUTF8 { name in
            var size = Self.respHeaderLength(command.argumentCount + 1) + Self.respBulkLength(name.count)
            command.forEachArgument { size += Self.respBulkLength($0.count + $1.count) }
            writeWithUnsafeMutableBytes(minimumWritableBytes: size) { out in
                var at = Self.putRESPHeader(UInt8(ascii: "*"), command.argumentCount + 1, into: out, at: 0)
                let none = UnsafeRawBufferPointer(start: nil, count: 0)
                at = Self.putRESPBulk(UnsafeRawBufferPointer(name), none, into: out, at: at)
                command.forEachArgument { at = Self.putRESPBulk($0, $1, into: out, at: at) }
                return at
            }
        }
    }

    /// The bytes of `*N\r\n` or `$N\r\n` (`count` ≥ 0).
    private static func respHeaderLength(_ count: Int) -> Int { decimalDigits(count) + 3 }

    /// The bytes of a bulk string of `count` bytes: its header, the bytes and CRLF.
    private static func respBulkLength(_ count: Int) -> Int { respHeaderLength(count) + count + 2 }

    private static func decimalDigits(_ value: Int) -> Int {
        var digits = 1
        var rest = value
        while rest >= 10 {
            rest /= 10
            digits += 1
        }
        return digits
    }

    /// `*N\r\n` or `$N\r\n` at `at`, its digits written in place (through `String(count)` a header cost ~950
    /// instructions); returns where it ends.
    private static func putRESPHeader(_ type: UInt8, _ count: Int, into out: UnsafeMutableRawBufferPointer, at start: Int)
        -> Int
    {
        let digits = decimalDigits(count)
        out[start] = type
        var value = count
        var at = start + digits
        repeat {
            out[at] = UInt8(ascii: "0") + UInt8(truncatingIfNeeded: value % 10)
            value /= 10
            at -= 1
        } while at > start
        out[start + digits + 1] = UInt8(ascii: "\r")
        out[start + digits + 2] = UInt8(ascii: "\n")
        return start + digits + 3
    }

    /// `bytes` at `at`; returns where they end.
    private static func putBytes(
        _ bytes: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer, at: Int
    ) -> Int {
        if let base = bytes.baseAddress, let target = out.baseAddress, !bytes.isEmpty {
            (target + at).copyMemory(from: base, byteCount: bytes.count)
        }
        return at + bytes.count
    }

    /// `$len\r\nhead tail\r\n` (the two parts of one bulk string) at `at`; returns where it ends.
    private static func putRESPBulk(
        _ head: UnsafeRawBufferPointer, _ tail: UnsafeRawBufferPointer, into out: UnsafeMutableRawBufferPointer,
        at start: Int
    ) -> Int {
        var at = putRESPHeader(UInt8(ascii: "$"), head.count + tail.count, into: out, at: start)
        at = putBytes(head, into: out, at: at)
        at = putBytes(tail, into: out, at: at)
        out[at] = UInt8(ascii: "\r")
        out[at + 1] = UInt8(ascii: "\n")
        return at + 2
    }
}
