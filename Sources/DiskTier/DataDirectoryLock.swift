import Foundation
import NIOConcurrencyHelpers

/// One running service per data dir: an exclusive `flock` on `DIR/unicache.lock`, taken before the disk tier opens
/// and held until the service has flushed its last write. A second instance on the same folder would sweep the first
/// one's writes in progress as a crash's leftovers, evict files the first has indexed and count the byte budget
/// twice; it stops at start-up instead, naming the holder's process id (the file holds it). The kernel releases the
/// lock when the holder exits, however it exits: a crash leaves nothing to clean up.
public final class DataDirectoryLock: Sendable {
    package static let fileName = "unicache.lock"
    /// The locked file's descriptor; nil once released.
    private let descriptor: NIOLockedValueBox<Int32?>

    private init(descriptor: Int32) {
        self.descriptor = NIOLockedValueBox(descriptor)
    }

    /// Creates `directory` when it is missing (as the disk tier would), then takes its lock.
    public static func acquire(_ directory: String) throws(DiskTierError) -> DataDirectoryLock {
        let root = DiskLayout(root: DiskTier.absolute(directory)).root
        let path = "\(root)/\(fileName)"
        let fd: Int32
        do throws(FileSystemError) {
            try DiskTier.makeDirectories(root, fileSystem: POSIXFileSystem())
            // Held read-only: Linux refuses to remount a file system read-only while a file on it is open for writing.
            // Non-blocking, and a regular file only: a FIFO under its name would hold start-up in `open` for ever.
            fd = open(path, O_RDONLY | O_CREAT | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC, 0o600)
            guard fd >= 0 else { throw FileSystemError("open \(fileName)", code: errno) }
            var status = stat()
            guard fstat(fd, &status) == 0, status.st_mode & S_IFMT == S_IFREG else {
                close(fd)
                throw FileSystemError.notRegularFile
            }
        } catch {
            throw .dataDirectoryUnusable(path: directory, reason: error.description)
        }
        guard flock(fd, LOCK_EX | LOCK_NB) == 0 else {
            let code = errno
            let holder = Self.holder(fd)
            close(fd)
            if code == EWOULDBLOCK { throw .dataDirectoryInUse(path: directory, holder: holder) }
            throw .dataDirectoryUnusable(path: directory, reason: FileSystemError("flock", code: code).description)
        }
        // Mode 600 whatever the umask left; the holder's process id, for an instance that finds the folder taken,
        // written through a descriptor of its own (closing it keeps the lock, which is the locked descriptor's).
        _ = fchmod(fd, 0o600)
        let writer = open(path, O_WRONLY | O_TRUNC | O_NOFOLLOW | O_CLOEXEC)
        if writer >= 0 {
            let pid = Array("\(getpid())\n".utf8)
            _ = pid.withUnsafeBytes { write(writer, $0.baseAddress, $0.count) }
            close(writer)
        }
        return DataDirectoryLock(descriptor: fd)
    }

    /// The process id the lock file names, when it names one.
    private static func holder(_ fd: Int32) -> Int? {
        var bytes = [UInt8](repeating: 0, count: 32)
        let count = bytes.withUnsafeMutableBytes { pread(fd, $0.baseAddress, $0.count, 0) }
        guard count > 0 else { return nil }
        return Int(String(decoding: bytes[..<count], as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines))
    }

    /// Lets the folder go (another instance may take it). Idempotent.
    public func release() {
        descriptor.withLockedValue { descriptor in
            if let fd = descriptor { close(fd) }
            descriptor = nil
        }
    }

    deinit { release() }
}
