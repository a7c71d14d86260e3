/// A reply from Redis (RESP2): `+` status, `-` error, `:` integer, `$` bulk string, `*` array; `$-1` and `*-1` are
/// `.null`. The link's one reply type: what the parser makes is what a caller gets.
public enum RedisReply: Sendable, Hashable {
    /// A bulk string (binary-safe).
    case string([UInt8])
    /// A simple string, e.g. `OK`, `PONG`.
    case status(String)
    case integer(Int)
    case array([RedisReply])
    /// A null bulk string or a null array.
    case null
    /// An error reply (`-WRONGPASS …`): a value, the connection stays usable.
    case error(RedisErrorReply)
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

    /// An integer reply, or a string of decimal digits (Sentinel answers ports as bulk strings).
    public var int: Int? {
        switch self {
        case .integer(let value): value
        case .string, .status: text.flatMap { Int($0) }
        default: nil
        }
    }

    /// The elements of an array reply; nil for other kinds.
    public var array: [RedisReply]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// The error of an error reply; nil for other kinds.
    public var errorReply: RedisErrorReply? {
        if case .error(let error) = self { return error }
        return nil
    }

    /// An error reply's prefix and what it means, never Redis's own text (which may repeat the command's arguments:
    /// keys, values); nil for other replies.
    public var errorSummary: String? {
        errorReply?.summary
    }

    /// An error reply refusing the user's credentials or permissions (`WRONGPASS`, `NOAUTH`, `NOPERM`).
    public var isRefusal: Bool {
        errorReply?.isAuthenticationError ?? false
    }
}
