#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension KeyRing {
    /// Reads and parses the key file at `path` (`--encryption-keys`). Like OpenSSH with a private key, it refuses
    /// a file its group or others may read or write. A link is followed (secrets are often mounted as links).
    public static func load(path: String) throws(KeyRingError) -> KeyRing {
        let bytes = try KeyFile.contents(of: path)
        guard let text = String(validating: bytes, as: UTF8.self) else { throw .malformedLine(1) }
        return try parse(text)
    }
}

/// The key file's bytes, through plain POSIX calls (outside `KeyRing`, whose `open` would hide the system's).
enum KeyFile {
    static let maxFileBytes = 64 * 1024

    static func contents(of path: String) throws(KeyRingError) -> [UInt8] {
        // Non-blocking: a FIFO opens at once (and is then refused) instead of hanging start-up.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NONBLOCK)
        guard fd >= 0 else { throw .unreadable(path: path, reason: errorText(errno)) }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw .unreadable(path: path, reason: errorText(errno)) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .notRegularFile(path: path) }
        let permissions = info.st_mode & 0o777
        guard permissions & 0o077 == 0 else { throw .tooOpen(path: path, mode: String(permissions, radix: 8)) }
        guard info.st_size <= maxFileBytes else { throw .tooLarge(path: path) }
        var bytes = [UInt8](repeating: 0, count: maxFileBytes + 1)
        var done = 0
        while done < bytes.count {
            let n = bytes.withUnsafeMutableBytes { buffer in
                // Force unwrap: `bytes` is never empty, so its base address exists.
                read(fd, buffer.baseAddress! + done, buffer.count - done)
            }
            if n < 0 {
                if errno == EINTR { continue }
                throw .unreadable(path: path, reason: errorText(errno))
            }
            if n == 0 { break }
            done += n
        }
        guard done <= maxFileBytes else { throw .tooLarge(path: path) }
        return Array(bytes[..<done])
    }

    private static func errorText(_ code: Int32) -> String {
        String(cString: strerror(code))
    }
}
