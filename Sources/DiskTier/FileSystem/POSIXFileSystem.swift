#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// The real file system, through plain POSIX calls (no buffering, no Foundation file handles).
public struct POSIXFileSystem: DiskFileSystem {
    public init() {}

    public func read(_ path: String, upTo limit: Int) throws(FileSystemError) -> FileContents {
        let fd = try Self.openEntry(path)
        defer { close(fd) }
        return try Self.contents(of: fd, upTo: limit, after: [])
    }

    /// One `read` into a buffer of up to 16 KiB, without `fstat`: a shorter read than asked is the whole file
    /// (Linux returns less than asked from a regular file only at its end; a short read that was not would fail
    /// the length check and go the `read` way). A file that fills the buffer is read on from the same descriptor.
    public func readWhole(_ path: String, upTo limit: Int) -> [UInt8]? {
        let asked = min(limit, Self.wholeReadBytes) + 1
        guard let fd = try? Self.openEntry(path) else { return nil }
        defer { close(fd) }
        // Read into scratch space on the stack, then keep only the bytes read: an array of `asked` bytes was a
        // 16 KiB allocation per disk hit for a file of about one.
        let (bytes, whole) = withUnsafeTemporaryAllocation(of: UInt8.self, capacity: asked) { buffer -> ([UInt8], Bool) in
            // Force unwrap: the buffer holds `asked` ≥ 1 bytes, so its base address exists.
            let n = Glibc.read(fd, buffer.baseAddress!, asked)
            guard n >= 0 else { return ([], false) }
            return (Array(UnsafeBufferPointer(rebasing: buffer[..<n])), n < asked)
        }
        if whole { return bytes }
        // The file filled the buffer: it may be longer (`limit` allows it), or exactly `limit` bytes plus more.
        guard limit >= asked else { return nil }
        return (try? Self.contents(of: fd, upTo: limit + 1, after: bytes))?.whole(upTo: limit)
    }

    /// Opens an entry file without following a link and without blocking: a FIFO opens at once (and is then
    /// refused) instead of hanging the tier.
    private static func openEntry(_ path: String) throws(FileSystemError) -> Int32 {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else {
            let code = errno
            throw code == ELOOP ? .notRegularFile : FileSystemError("open", code: code)
        }
        return fd
    }

    /// The open regular file's first `limit` bytes, of which `prefix` were already read from its start.
    private static func contents(of fd: Int32, upTo limit: Int, after prefix: [UInt8]) throws(FileSystemError)
        -> FileContents
    {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw FileSystemError("fstat", code: errno) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .notRegularFile }
        let size = Int(info.st_size)
        let wanted = min(size, limit)
        var failure: Int32 = 0
        // Read into uninitialised storage: only the bytes read become the array's.
        let bytes = [UInt8](unsafeUninitializedCapacity: max(wanted, prefix.count)) { buffer, count in
            count = buffer.initialize(fromContentsOf: prefix)
            while count < wanted {
                // Force unwrap: the buffer has room for `wanted` > 0 bytes here, so its base address exists.
                let n = Glibc.read(fd, buffer.baseAddress! + count, wanted - count)
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = errno
                    return
                }
                if n == 0 { return }  // The file shrank under us: the caller sees fewer bytes than `size`.
                count += n
            }
        }
        if failure != 0 { throw FileSystemError("read", code: failure) }
        let modified = Date(
            timeIntervalSince1970: TimeInterval(info.st_mtim.tv_sec) + TimeInterval(info.st_mtim.tv_nsec) / 1e9)
        return FileContents(bytes: bytes, size: size, modified: modified, permissions: UInt32(info.st_mode & 0o7777))
    }

    /// What `readWhole` reads in one call: most entries (a body of a few KiB and its header) fit.
    static let wholeReadBytes = 16 << 10

    /// Mode 600 at `open` and again by `fchmod`: the umask can only take bits away, and a stricter one than 077
    /// would leave the service unable to read its own file.
    public func createFile(_ path: String, bytes: [UInt8], sync: Bool) throws(FileSystemError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, Self.fileMode)
        guard fd >= 0 else { throw FileSystemError("open", code: errno) }
        guard fchmod(fd, Self.fileMode) == 0 else {
            let code = errno
            close(fd)
            throw FileSystemError("fchmod", code: code)
        }
        var done = 0
        while done < bytes.count {
            // Force unwrap: `bytes` is non-empty here (done < count), so its base address exists.
            let n = bytes.withUnsafeBytes { Glibc.write(fd, $0.baseAddress! + done, bytes.count - done) }
            if n < 0 {
                if errno == EINTR { continue }
                let code = errno
                close(fd)
                throw FileSystemError("write", code: code)
            }
            done += n
        }
        if sync, fsync(fd) != 0 {
            let code = errno
            close(fd)
            throw FileSystemError("fsync", code: code)
        }
        guard close(fd) == 0 else { throw FileSystemError("close", code: errno) }
    }

    public func rename(_ source: String, to destination: String) throws(FileSystemError) {
        guard Glibc.rename(source, destination) == 0 else { throw FileSystemError("rename", code: errno) }
    }

    public func unlink(_ path: String) throws(FileSystemError) {
        guard Glibc.unlink(path) == 0 else { throw FileSystemError("unlink", code: errno) }
    }

    public func list(_ directory: String) throws(FileSystemError) -> [String] {
        guard let dir = opendir(directory) else { throw FileSystemError("opendir", code: errno) }
        defer { closedir(dir) }
        var names: [String] = []
        while let entry = readdir(dir) {
            let name = withUnsafeBytes(of: entry.pointee.d_name) { raw in
                String(decoding: raw.prefix(while: { $0 != 0 }), as: UTF8.self)
            }
            if name != "." && name != ".." { names.append(name) }
        }
        return names
    }

    /// Mode 700 at `mkdir`, then `fchmod` of the folder just made (the umask may have taken more away). A folder
    /// that already exists is left as it is: it may be a mount point or shared (the data dir's parents are made here
    /// too, by `mkdir -p`).
    public func makeDirectory(_ path: String) throws(FileSystemError) {
        guard mkdir(path, Self.folderMode) == 0 else {
            if errno == EEXIST { return }
            throw FileSystemError("mkdir", code: errno)
        }
        // Through a descriptor of the folder itself: a link put in its place meanwhile is not followed.
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC)
        guard fd >= 0 else { throw FileSystemError("open", code: errno) }
        defer { close(fd) }
        guard fchmod(fd, Self.folderMode) == 0 else { throw FileSystemError("fchmod", code: errno) }
    }

    public func restrictAccess(_ path: String) {
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_uid == geteuid() else { return }
        switch info.st_mode & S_IFMT {
        case S_IFREG: if info.st_mode & 0o7777 != Self.fileMode { _ = fchmod(fd, Self.fileMode) }
        case S_IFDIR: if info.st_mode & 0o7777 != Self.folderMode { _ = fchmod(fd, Self.folderMode) }
        default: break
        }
    }

    /// What the tier's files and folders allow (CONTRACT §8.9): their owner only.
    package static let fileMode: mode_t = 0o600
    package static let folderMode: mode_t = 0o700

    public func syncDirectory(_ path: String) throws(FileSystemError) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw FileSystemError("open", code: errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw FileSystemError("fsync", code: errno) }
    }
}
