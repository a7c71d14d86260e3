import Crypto

/// A Lua script and its SHA-1, so that commands carry the 40-byte digest (`EVALSHA`) rather than the script's text.
/// Redis keeps scripts in a cache that a restart or `SCRIPT FLUSH` empties: a `NOSCRIPT` answer is followed by one
/// `EVAL` with the text, which caches it again (the pattern Redis documents for EVALSHA; `RedisNodeClient.evaluate`).
public struct RedisScript: Sendable {
    public let source: [UInt8]
    /// Lower-case hex SHA-1 of the source, as `SCRIPT LOAD` answers it.
    package let sha1: [UInt8]

    public init(_ source: String) {
        self.source = Array(source.utf8)
        sha1 = Array(Insecure.SHA1.hash(data: self.source).map { byte in
            let hex = String(byte, radix: 16)
            return byte < 16 ? "0" + hex : hex
        }.joined().utf8)
    }

    /// `EVALSHA` (or, with `loading`, `EVAL`) of this script over `keys` and `arguments`.
    func command(keys: [[UInt8]], arguments: [[UInt8]], loading: Bool = false) -> RedisCommand {
        loading ? .eval(source, keys: keys, arguments: arguments) : .evalSHA(sha1, keys: keys, arguments: arguments)
    }
}
