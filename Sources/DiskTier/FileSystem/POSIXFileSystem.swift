#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Foundation

/// The real file system, through plain POSIX calls (no buffering, no Foundation file handles). `readWhole` keeps
/// the files it reads open (`OpenFiles`); `rename` and `unlink` let go of what they replace.
public struct POSIXFileSystem: DiskFileSystem {
    let openFiles: OpenFiles

    /// `keepingOpen`: how many entry files `readWhole` may hold open (0: none; default: `OpenFiles.defaultCapacity`).
    public init(keepingOpen capacity: Int? = nil) {
        openFiles = OpenFiles(capacity: capacity ?? OpenFiles.defaultCapacity)
    }

    public var keptOpenFiles: Int { openFiles.capacity }

    public func read(_ path: String, upTo limit: Int) throws(FileSystemError) -> FileContents {
        let fd = try Self.openEntry(path)
        defer { close(fd) }
        return try Self.contents(of: fd, upTo: limit)
    }

    /// From the file kept open at `path` when there is one, else from a new descriptor, kept when the read succeeds.
    /// A kept file is read by one `pread` of up to 16 KiB (a read shorter than asked is the whole file); every 16th
    /// read of it, and any read that may not be whole, begins with an `fstat` instead: a regular file of at most
    /// `limit` bytes, still linked (not renamed over or deleted by someone else), read for its size.
    public func readWhole(_ path: String, upTo limit: Int) -> [UInt8]? {
        readWhole(OpenFiles.Name(path: path), at: { path }, upTo: limit)
    }

    /// As `readWhole(_:upTo:)`, the file kept open found by the entry's key (its path made only to open it).
    public func readWhole(
        entry key: String, hash: Int, in root: String, at path: () -> String, upTo limit: Int
    ) -> [UInt8]? {
        readWhole(OpenFiles.Name(key: key, hash: hash, in: root), at: path, upTo: limit)
    }

    private func readWhole(_ name: OpenFiles.Name, at path: () -> String, upTo limit: Int) -> [UInt8]? {
        if let file = openFiles[name] {
            if !file.isDueForCheck(), let bytes = Self.readShort(file.descriptor, upTo: limit) { return bytes }
            switch Self.readWhole(file.descriptor, upTo: limit) {
            case .linked(let bytes): return bytes
            case .unusable: return nil
            case .unlinked: openFiles.drop(name, ifStill: file)
            }
        }
        let generation = openFiles.generation
        let path = path()
        guard let fd = try? Self.openEntry(path) else { return nil }
        let file = OpenFile(fd)
        switch Self.readWhole(fd, upTo: limit) {
        case .linked(let bytes):
            openFiles.keep(file, as: name, at: path, openedIn: generation)
            return bytes
        case .unlinked(let bytes):
            // Replaced since it was opened: the file the path named then, not to be kept.
            return bytes
        case .unusable:
            return nil
        }
    }

    /// What one `readShort` asks for: most entries (a body of a few KiB and its header) fit.
    static let shortReadBytes = 16 << 10

    /// The kept regular file's bytes when one `pread` of up to 16 KiB (or `limit` + 1) reads fewer than asked: then
    /// they are the whole file (Linux returns less than asked from a regular file only at its end). Read into
    /// scratch space, of which only the bytes read are kept. At 16 KiB the standard library allocates it on the heap,
    /// aligned, not on the stack; reading straight into an array of the file's own length (kept per open file) made
    /// a disk hit about 500 instructions shorter but cost it about 5 % more CPU in interleaved rounds against this
    /// (more time in `memmove` and `_int_malloc`, 2026-12-06), and was not kept; nor was a pool of scratch buffers
    /// reused from read to read (1.04x the CPU; most likely the chunk freed here keeps the allocations after it on
    /// memory just touched; docs/benchmarks.md).
    private static func readShort(_ fd: Int32, upTo limit: Int) -> [UInt8]? {
        let asked = min(limit, shortReadBytes) + 1
        return withUnsafeTemporaryAllocation(of: UInt8.self, capacity: asked) { buffer -> [UInt8]? in
            // Force unwrap: the buffer holds `asked` ≥ 1 bytes, so its base address exists.
            let n = pread(fd, buffer.baseAddress!, asked, 0)
            guard n >= 0, n < asked else { return nil }
            return Array(UnsafeBufferPointer(rebasing: buffer[..<n]))
        }
    }

    private enum WholeRead {
        /// The file's bytes; the path may name it still.
        case linked([UInt8])
        /// The file's bytes; it has been renamed over or deleted, so the path names another file, or none.
        case unlinked([UInt8])
        /// Not a regular file, longer than the limit, or failing to read: the tier's `read` tells why.
        case unusable
    }

    /// The open file's bytes when they are the whole of a regular file of at most `limit` bytes: a file that shrinks
    /// meanwhile is unusable, and one written in place meanwhile may read as a mix, which does not verify.
    private static func readWhole(_ fd: Int32, upTo limit: Int) -> WholeRead {
        guard let contents = try? contents(of: fd, upTo: min(limit, Int.max - 1) + 1),
            let bytes = contents.whole(upTo: limit)
        else { return .unusable }
        return contents.isLinked ? .linked(bytes) : .unlinked(bytes)
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

    /// The open regular file's first `limit` bytes, read from its start whatever the descriptor's offset (`pread`:
    /// a kept descriptor is read by several threads).
    private static func contents(of fd: Int32, upTo limit: Int) throws(FileSystemError) -> FileContents {
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw FileSystemError("fstat", code: errno) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .notRegularFile }
        let size = Int(info.st_size)
        let wanted = min(size, limit)
        var failure: Int32 = 0
        // Read into uninitialised storage: only the bytes read become the array's.
        let bytes = [UInt8](unsafeUninitializedCapacity: wanted) { buffer, count in
            while count < wanted {
                // Force unwrap: the buffer has room for `wanted` > 0 bytes here, so its base address exists.
                let n = pread(fd, buffer.baseAddress! + count, wanted - count, off_t(count))
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
        return FileContents(
            bytes: bytes, size: size, modified: modified, permissions: UInt32(info.st_mode & 0o7777),
            isLinked: info.st_nlink > 0)
    }

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

    /// The file kept open at `destination`, if any, is let go after the rename (a reader that opened the old file
    /// before it then cannot keep it: `OpenFiles.generation`).
    public func rename(_ source: String, to destination: String) throws(FileSystemError) {
        defer { openFiles.drop(destination) }
        guard Glibc.rename(source, destination) == 0 else { throw FileSystemError("rename", code: errno) }
    }

    /// As `rename`, the file kept open at `path` is let go after the unlink. A missing file is "not found" on a
    /// read-only mount too (where Linux's unlink says EROFS before it looks the name up).
    public func unlink(_ path: String) throws(FileSystemError) {
        defer { openFiles.drop(path) }
        guard Glibc.unlink(path) != 0 else { return }
        let code = errno
        var status = stat()
        if code != ENOENT, lstat(path, &status) != 0, errno == ENOENT { throw FileSystemError("unlink", code: ENOENT) }
        throw FileSystemError("unlink", code: code)
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
