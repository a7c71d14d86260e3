import Sealing

/// Values at rest (CONTRACT §9): the key ring's file, read at start-up; no file, no sealing.
public struct EncryptionSettings: Sendable, Equatable {
    /// `--encryption-keys FILE`; `nil` when unset.
    public var keyFile: String?
    /// Where the path came from (the flag or `UNICACHE_ENCRYPTION_KEYS`), for the start-up error.
    public var source: String
    /// `--encryption-migrate`: with a key ring, plaintext values are still read (and rekey seals them); without it
    /// they fail to open (CONTRACT §9.2). Only valid with `keyFile` (the configuration refuses it otherwise).
    public var migrate: Bool

    public init(keyFile: String? = nil, source: String = "--encryption-keys", migrate: Bool = false) {
        self.keyFile = keyFile
        self.source = source
        self.migrate = migrate
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
