import NIOCore
import Redis
import RedisTestSupport

/// A test server's node with no password.
func endpoint(_ server: RedisServerProcess) -> RedisEndpoint {
    RedisEndpoint(host: "127.0.0.1", port: server.port)
}

/// A connection to `endpoint` (generous bounds: CI runs on 2 busy cores).
func connect(_ endpoint: RedisEndpoint, timeout: Duration = .seconds(5)) async throws(RedisError) -> RedisConnection {
    try await RedisConnection.connect(endpoint, timeout: timeout, connectTimeout: .seconds(5))
}

/// A plain connection to a test server.
func connect(_ server: RedisServerProcess, timeout: Duration = .seconds(5)) async throws(RedisError) -> RedisConnection {
    try await connect(endpoint(server), timeout: timeout)
}

/// What `next` makes of `wire` fed one byte at a time, each reply taken as soon as it is whole, and how many bytes
/// it left unread at the end.
func fedOneByteAtATime(
    _ wire: [UInt8], _ next: (inout ByteBuffer) throws -> RedisReply?
) rethrows -> (values: [RedisReply], unread: Int) {
    var buffer = ByteBuffer()
    var values: [RedisReply] = []
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
