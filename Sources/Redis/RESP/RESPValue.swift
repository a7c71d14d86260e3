/// A RESP2 reply: `+` simple string, `-` error, `:` integer, `$` bulk string, `*` array; `$-1` and `*-1` are `.null`.
public enum RESPValue: Sendable, Equatable {
    case simpleString(String)
    /// An error reply (`-WRONGPASS …`): a value, the connection stays usable.
    case error(RedisServerError)
    case integer(Int64)
    /// A bulk string (binary-safe).
    case bulkString([UInt8])
    case array([RESPValue])
    /// A null bulk string or a null array.
    case null
}

extension RESPValue {
    /// The bytes of a bulk or simple string; nil for other kinds.
    public var bytes: [UInt8]? {
        switch self {
        case .bulkString(let bytes): bytes
        case .simpleString(let text): Array(text.utf8)
        default: nil
        }
    }

    /// A bulk or simple string as text (invalid UTF-8 repaired); nil for other kinds.
    public var string: String? {
        bytes.map { String(decoding: $0, as: UTF8.self) }
    }

    /// An integer reply, or a string of decimal digits (Sentinel answers ports as bulk strings).
    public var int: Int? {
        switch self {
        case .integer(let value): Int(exactly: value)
        case .bulkString, .simpleString: string.flatMap { Int($0) }
        default: nil
        }
    }

    public var array: [RESPValue]? {
        if case .array(let elements) = self { return elements }
        return nil
    }

    /// The error of an error reply; nil for other kinds.
    public var serverError: RedisServerError? {
        if case .error(let error) = self { return error }
        return nil
    }
}

/// A command argument: bytes, binary-safe. Strings are sent as UTF-8, integers in decimal.
public struct RESPArgument: Sendable, Hashable, ExpressibleByStringLiteral, ExpressibleByIntegerLiteral {
    public var bytes: [UInt8]

    public init(bytes: [UInt8]) { self.bytes = bytes }
    public init(_ text: String) { bytes = Array(text.utf8) }
    public init<Integer: BinaryInteger>(_ value: Integer) { bytes = Array(String(value).utf8) }
    public init(stringLiteral value: String) { self.init(value) }
    public init(integerLiteral value: Int) { self.init(value) }
}
