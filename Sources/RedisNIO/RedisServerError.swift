/// An error reply from Redis, told apart by its prefix (the first word: `WRONGPASS`, `NOAUTH`, `NOPERM`, `READONLY`,
/// `NOSCRIPT`, `MOVED`, `ASK`, `TRYAGAIN`, `ERR`, …).
public struct RedisServerError: Error, Sendable, Hashable, CustomStringConvertible {
    /// The whole line after `-`.
    public let message: String

    public init(message: String) { self.message = message }

    /// The first word of the message (`ERR` when the message is empty).
    public var prefix: String {
        let word = message.prefix { $0 != " " }
        return word.isEmpty ? "ERR" : String(word)
    }

    public var kind: Kind { Kind(rawValue: prefix) ?? .other }

    public var description: String { message }

    /// The prefixes a caller acts on; `.other` for the rest (see `prefix`).
    public enum Kind: String, Sendable, Hashable {
        case err = "ERR"
        case wrongPass = "WRONGPASS"
        case noAuth = "NOAUTH"
        case noPerm = "NOPERM"
        case readOnly = "READONLY"
        case noScript = "NOSCRIPT"
        case moved = "MOVED"
        case ask = "ASK"
        case tryAgain = "TRYAGAIN"
        case wrongType = "WRONGTYPE"
        case busy = "BUSY"
        case loading = "LOADING"
        case masterDown = "MASTERDOWN"
        case other
    }

    /// An authentication refusal (`WRONGPASS`, `NOAUTH`, `NOPERM`).
    public var isAuthenticationError: Bool {
        [.wrongPass, .noAuth, .noPerm].contains(kind)
    }
}
