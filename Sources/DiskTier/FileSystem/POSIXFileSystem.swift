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
        // Never follow a link, never block: a FIFO opens at once (and is then refused) instead of hanging the tier.
        let fd = open(path, O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK)
        guard fd >= 0 else {
            let code = errno
            throw code == ELOOP ? .notRegularFile : FileSystemError("open", code: code)
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw FileSystemError("fstat", code: errno) }
        guard info.st_mode & S_IFMT == S_IFREG else { throw .notRegularFile }
        let size = Int(info.st_size)
        let wanted = min(size, limit)
        var bytes = [UInt8](repeating: 0, count: wanted)
        var done = 0
        while done < wanted {
            // Force unwrap: `bytes` is non-empty here (done < wanted), so its base address exists.
            let n = bytes.withUnsafeMutableBytes { Glibc.read(fd, $0.baseAddress! + done, wanted - done) }
            if n < 0 {
                if errno == EINTR { continue }
                throw FileSystemError("read", code: errno)
            }
            if n == 0 { break }  // The file shrank under us: the caller sees fewer bytes than `size`.
            done += n
        }
        bytes.removeLast(wanted - done)
        let modified = Date(
            timeIntervalSince1970: TimeInterval(info.st_mtim.tv_sec) + TimeInterval(info.st_mtim.tv_nsec) / 1e9)
        return FileContents(bytes: bytes, size: size, modified: modified)
    }

    public func createFile(_ path: String, bytes: [UInt8], sync: Bool) throws(FileSystemError) {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard fd >= 0 else { throw FileSystemError("open", code: errno) }
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

    public func makeDirectory(_ path: String) throws(FileSystemError) {
        if mkdir(path, 0o755) != 0 && errno != EEXIST { throw FileSystemError("mkdir", code: errno) }
    }

    public func syncDirectory(_ path: String) throws(FileSystemError) {
        let fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw FileSystemError("open", code: errno) }
        defer { close(fd) }
        guard fsync(fd) == 0 else { throw FileSystemError("fsync", code: errno) }
    }
}
