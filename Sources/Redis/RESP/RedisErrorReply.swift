/// An error reply from Redis (a value in a `RedisReply`, or the cause of a `RedisError.errorReply`), told apart by
/// its prefix (the first word: `WRONGPASS`, `NOAUTH`, `NOPERM`, `READONLY`, `NOSCRIPT`, `MOVED`, `ASK`, `TRYAGAIN`,
/// `ERR`, …).
///
/// Redis's text may repeat what it was sent (an unknown command's arguments, keys and values; a proxy's `AUTH` error
/// its password), so `description` is the prefix and what it means, with Redis's text (escaped) only for the reply to
/// a known command that carries neither a secret nor data (`summary`). The reply to a command that carries a secret
/// (`AUTH`, `HELLO`) keeps only its prefix, even in `message`.
public struct RedisErrorReply: Sendable, Hashable, CustomStringConvertible {
    /// The whole line after `-` (only the prefix for a reply to `AUTH` or `HELLO`).
    public let message: String
    /// The command this answered, when known (`AUTH`, `SELECT`, `ROLE`, `SUBSCRIBE`, …).
    public let command: String?

    public init(message: String, command: String? = nil) {
        self.message = message
        self.command = command
    }

    /// Commands whose arguments are secrets: Redis's reply to them is cut to its prefix.
    static let secretBearing: Set<String> = ["AUTH", "HELLO"]

    /// This error as the reply to `command`; cut to its prefix when the command carries a secret.
    package func answering(_ command: String) -> RedisErrorReply {
        let name = command.uppercased()
        return RedisErrorReply(message: Self.secretBearing.contains(name) ? prefix : message, command: name)
    }

    /// The first word of the message when it is an error code (1–32 ASCII capitals, digits or `_`), else `ERR`.
    public var prefix: String {
        let word = message.prefix { $0 != " " }
        let isCode = (1...32).contains(word.utf8.count) && word.utf8.allSatisfy { byte in
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "_"): true
            default: false
            }
        }
        return isCode ? String(word) : "ERR"
    }

    /// The prefix's kind; `.noPerm` also for the `ERR` a script gets when a command it runs is refused for the user's
    /// ACL rules (Redis 7.0 says `ERR The user executing the script can't publish to the channel …`, not `NOPERM`).
    public var kind: Kind {
        let kind = Kind(rawValue: prefix) ?? .other
        return kind == .err && message.hasPrefix(Self.scriptRefusal) ? .noPerm : kind
    }

    /// How Redis 7.0 begins the error of a script whose command the user's ACL rules refuse (at the start only: later
    /// in an error, such words may be a key or value the error repeats).
    static let scriptRefusal = "ERR The user executing the script can't "

    /// What logs, `/stats` and problems may show: the prefix and what it means. Redis's own text is added (escaped)
    /// only for the reply to a known command without secret or cached arguments (`SELECT`, `PING`, `ROLE`,
    /// `SUBSCRIBE`: see `answering`); otherwise it may repeat what it was sent, and is not shown.
    public var summary: String {
        let meaning = kind.meaning.map { " (\($0))" } ?? ""
        guard let command, !Self.secretBearing.contains(command), message != prefix else {
            guard kind.meaning == nil else { return prefix + meaning }
            return prefix + " (Redis's own text is not shown: it may repeat the command's arguments)"
        }
        return prefix + meaning + ": Redis says \(message.escapedForLog)"
    }

    public var description: String { summary }

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

        /// In a few words, for messages; nil for `ERR` and unknown prefixes.
        var meaning: String? {
            switch self {
            case .wrongPass: "the user name or password is wrong, or the user is disabled"
            case .noAuth: "Redis wants a password first"
            case .noPerm: "the user's ACL rules do not allow the command, key or channel"
            case .readOnly: "a replica, not the primary"
            case .noScript: "the script is not in Redis's cache"
            case .moved, .ask: "the key is served by another node"
            case .tryAgain: "the keys are being moved between nodes"
            case .wrongType: "the key holds another kind of value"
            case .busy: "a script is running"
            case .loading: "Redis is loading its data"
            case .masterDown: "the replica has lost its primary"
            case .err, .other: nil
            }
        }
    }

    /// An authentication refusal (`WRONGPASS`, `NOAUTH`, `NOPERM`).
    package var isAuthenticationError: Bool {
        [.wrongPass, .noAuth, .noPerm].contains(kind)
    }
}
