/// Why a key ring cannot be used. Each description is one line that names the file or the line, never a key's
/// bytes and never a line's text (a malformed line may hold a key).
public enum KeyRingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The file cannot be opened or read; `reason` is the system's (e.g. "No such file or directory").
    case unreadable(path: String, reason: String)
    /// Not a regular file (a folder, a device).
    case notRegularFile(path: String)
    /// Its group or others may read or write it (`mode` in octal, e.g. "644").
    case tooOpen(path: String, mode: String)
    /// Larger than any key ring (64 KiB).
    case tooLarge(path: String)
    /// A line that is not `ID:BASE64` with an ID of `[A-Za-z0-9_-]{1,32}`.
    case malformedLine(Int)
    /// The text after the ID is not base64.
    case notBase64(line: Int, id: String)
    /// The key decodes to another length than 32 bytes.
    case wrongKeyLength(line: Int, id: String, bytes: Int)
    case duplicateID(line: Int, id: String)
    /// No key at all (only blank lines and comments).
    case empty

    public var description: String {
        switch self {
        case .unreadable(let path, let reason): "cannot read the key file \(path): \(reason)"
        case .notRegularFile(let path): "the key file \(path) is not a regular file"
        case .tooOpen(let path, let mode):
            "the key file \(path) has mode \(mode): its group or others may use it (chmod 600 \(path), as OpenSSH requires of private keys)"
        case .tooLarge(let path): "the key file \(path) is larger than 64 KiB: not a key ring"
        case .malformedLine(let line):
            "line \(line) is not ID:BASE64 (ID of 1-32 letters, digits, _ or -; the key from `head -c 32 /dev/urandom | base64`)"
        case .notBase64(let line, let id): "line \(line): the key of ID \(id) is not base64"
        case .wrongKeyLength(let line, let id, let bytes):
            "line \(line): the key of ID \(id) is \(bytes) bytes, not 32 (make one with `head -c 32 /dev/urandom | base64`)"
        case .duplicateID(let line, let id): "line \(line): the ID \(id) is used twice"
        case .empty: "the key file holds no key (one ID:BASE64 line a key, the first the primary)"
        }
    }
}
