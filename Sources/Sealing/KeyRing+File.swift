extension KeyRing {
    /// Reads and parses the key file at `path` (`--encryption-keys`). Like OpenSSH with a private key, it refuses
    /// a file its group or others may read or write. A link is followed (secrets are often mounted as links).
    public static func load(path: String) throws(KeyRingError) -> KeyRing {
        let bytes = try KeyFile.contents(of: path)
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .malformedLine(1) }
        return try parse(text)
    }
}

/// The key file's bytes: a secret file of at most 64 KiB.
enum KeyFile {
    static let maxFileBytes = 64 * 1024

    static func contents(of path: String) throws(KeyRingError) -> [UInt8] {
        do {
            return try SecretFile.contents(of: path, limit: maxFileBytes)
        } catch {
            switch error {
            case .unreadable(let reason): throw .unreadable(path: path, reason: reason)
            case .notRegularFile: throw .notRegularFile(path: path)
            case .tooOpen(let mode): throw .tooOpen(path: path, mode: mode)
            case .tooLarge: throw .tooLarge(path: path)
            }
        }
    }
}
