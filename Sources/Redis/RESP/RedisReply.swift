
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

extension RedisReply {
    /// An error reply's prefix and what it means, never Redis's own text (which may repeat the command's arguments:
    /// keys, values); nil for other replies.
    public var errorSummary: String? {
        guard case .error(let message) = self else { return nil }
        return RedisServerError(message: message).summary
    }

    /// An error reply refusing the user's credentials or permissions (`WRONGPASS`, `NOAUTH`, `NOPERM`).
    public var isRefusal: Bool {
        guard case .error(let message) = self else { return false }
        return RedisServerError(message: message).isAuthenticationError
    }
}

public enum RedisError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Redis could not be asked: connect refused/timed out, I/O error, command timeout, the breaker is open, or the
    /// pool was shut down. The reason never contains the password.
    case unavailable(String)
    /// Redis refused this instance's credentials or permissions (`WRONGPASS`, `NOAUTH`, `NOPERM`), or the breaker is
    /// open after such a refusal: a configuration to fix, not an outage. The reason names the user, never the password.
    case refused(String)

    public var reason: String {
        switch self {
        case .unavailable(let reason), .refused(let reason): reason
        }
    }

    public var description: String {
        switch self {
        case .unavailable(let reason): "Redis unavailable: \(reason)"
        case .refused(let reason): "Redis refused: \(reason)"
        }
    }
}
