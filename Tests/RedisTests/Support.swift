import NIOCore
import Redis
import RedisTestSupport

/// A plain connection to a test server (generous bounds: CI runs on 2 busy cores).
func configuration(_ server: RedisServerProcess, timeout: Duration = .seconds(5)) -> RedisConnectionConfiguration {
    RedisConnectionConfiguration(host: "127.0.0.1", port: server.port, commandTimeout: timeout, connectTimeout: .seconds(5))
}

/// What `next` makes of `wire` fed one byte at a time, each reply taken as soon as it is whole, and how many bytes
/// it left unread at the end.
func fedOneByteAtATime(
    _ wire: [UInt8], _ next: (inout ByteBuffer) throws -> RESPValue?
) rethrows -> (values: [RESPValue], unread: Int) {
    var buffer = ByteBuffer()
    var values: [RESPValue] = []
    for byte in wire {
        buffer.writeInteger(byte)
        while let value = try next(&buffer) { values.append(value) }
    }
    return (values, buffer.readableBytes)
}

extension Array where Element == UInt8 {
    init(_ text: String) {
        self = Array(text.utf8)
    }
}

/// The reason of an error (`.unavailable` or `.refused`).
func reason(_ error: RedisError?) -> String? {
    error?.reason
}
