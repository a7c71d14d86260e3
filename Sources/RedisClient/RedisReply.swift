/// A RESP2 reply.
public enum RedisReply: Sendable, Equatable {
    /// Bulk string (binary).
    case string([UInt8])
    /// Simple string, e.g. "OK", "PONG".
    case status(String)
    case integer(Int)
    case array([RedisReply])
    /// Null bulk string or null array.
    case null
    /// Error reply, e.g. "ERR unknown command …" or "WRONGTYPE …". The connection stays usable.
    case error(String)
}

extension RedisReply {
    /// The bytes of a bulk string or the UTF-8 of a status; nil for other kinds.
    public var bytes: [UInt8]? {
        switch self {
        case .string(let bytes): bytes
        case .status(let text): Array(text.utf8)
        default: nil
        }
    }

    /// A bulk string or status as text (invalid UTF-8 repaired); nil for other kinds.
    public var text: String? {
        bytes.map { String(decoding: $0, as: UTF8.self) }
    }
}

public enum RedisError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Redis could not be asked: connect refused/timed out, I/O error, command timeout, auth
    /// failure, the breaker is open, or the pool was shut down. The reason never contains the password.
    case unavailable(String)

    public var description: String {
        switch self {
        case .unavailable(let reason): "Redis unavailable: \(reason)"
        }
    }
}
