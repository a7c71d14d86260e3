#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A file that holds a secret (a key ring, a TLS private key, an admin token): read through plain POSIX calls and,
/// like OpenSSH with a private key, refused when its group or others may read or write it (CONTRACT §8.9, §9.4).
/// A link is followed (secrets are often mounted as links). Errors name the path, never a byte of the file.
public enum SecretFile {
    public enum Failure: Error, Sendable, Equatable, CustomStringConvertible {
        /// Cannot be opened or read; `reason` is the system's (e.g. "No such file or directory").
        case unreadable(reason: String)
        /// Not a regular file (a folder, a device, a FIFO).
        case notRegularFile
        /// Its group or others may read or write it (`mode` in octal, e.g. "644").
        case tooOpen(mode: String)
        /// Larger than the caller's limit.
        case tooLarge(limit: Int)

        public var description: String {
            switch self {
            case .unreadable(let reason): "cannot be read: \(reason)"
            case .notRegularFile: "is not a regular file"
            case .tooOpen(let mode): "has mode \(mode): its group or others may read it"
            case .tooLarge(let limit): "is larger than \(limit) bytes"
            }
        }
    }

    /// The bytes of the file at `path`, at most `limit` of them.
    public static func contents(of path: String, limit: Int) throws(Failure) -> [UInt8] {
        // Non-blocking: a FIFO opens at once (and is then refused) instead of hanging start-up.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw .unreadable(reason: errorText(errno)) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .unreadable(reason: errorText(errno)) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .notRegularFile }
        let permissions = info.st_mode & 0o777
        guard permissions & 0o077 == 0 else { throw .tooOpen(mode: String(permissions, radix: 8)) }
        guard info.st_size <= limit else { throw .tooLarge(limit: limit) }
        var bytes = [UInt8](repeating: 0, count: limit + 1)
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeMutableBytes { buffer in
                // Force unwrap: `bytes` is never empty, so its base address exists.
                read(fd, buffer.baseAddress! + done, buffer.count - done)
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw .unreadable(reason: errorText(errno))
            }
            if n == 0 { break }
            done += n
        }
        guard done <= limit else { throw .tooLarge(limit: limit) }
        return Array(bytes[..<done])
    }

    private static func errorText(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
