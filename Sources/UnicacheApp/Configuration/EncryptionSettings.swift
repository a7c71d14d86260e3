import Sealing

/// Values at rest (CONTRACT §9): the key ring's file, read at start-up; no file, no sealing.
public struct EncryptionSettings: Sendable, Equatable {
    /// `--encryption-keys FILE`; `nil` when unset.
    public var keyFile: String?
    /// Where the path came from (the flag or `UNICACHE_ENCRYPTION_KEYS`), for the start-up error.
    public var source: String

    public init(keyFile: String? = nil, source: String = "--encryption-keys") {
        self.keyFile = keyFile
        self.source = source
    }

    /// The key ring, `nil` without `--encryption-keys`. A bad ring is a one-line error naming the flag (and the
    /// variable, when the path came from it), never a byte of a key.
    public func keyRing() throws(ConfigurationError) -> KeyRing? {
        guard let keyFile else { return nil }
        do {
            return try KeyRing.load(path: keyFile)
        } catch {
            let name = source == "--encryption-keys" ? source : "\(source) (--encryption-keys)"
            throw ConfigurationError(message: "\(name): \(error.description)")
        }
    }
}
