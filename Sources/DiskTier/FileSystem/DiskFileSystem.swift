import Foundation

/// The seam between the disk tier and the operating system: every file operation the tier performs.
///
/// `POSIXFileSystem` is the real one; tests plug in a fault-injecting one. Paths are absolute and are
/// always built by the tier from a hash, never from input. Implementations are called from the tier's
/// I/O queue and its index-rebuild queue at the same time, so they must be safe to call concurrently.
public protocol DiskFileSystem: Sendable {
    /// Reads at most `limit` bytes from the start of the file, plus its size and modification time. Anything but a
    /// regular file (a link is not followed) throws `FileSystemError.notRegularFile` without blocking.
    func read(_ path: String, upTo limit: Int) throws(FileSystemError) -> FileContents
    /// The whole file, read on a caller's thread when a disk hit is answered there: nil on any error and whenever
    /// the bytes may not be the whole file (longer than `limit`), so that the caller defers to `read`, which tells
    /// why. Anything but a regular file reads as an error or as empty bytes, which do not verify.
    func readWhole(_ path: String, upTo limit: Int) -> [UInt8]?
    /// The same for entry `key` of the tier under `root`, whose file is at `path()`: a file system that keeps files
    /// open finds one by the key and `hash` (the same for one key at every call: its `KeyHash`), and makes the path
    /// only to open it.
    func readWhole(entry key: String, hash: Int, in root: String, at path: () -> String, upTo limit: Int) -> [UInt8]?
    /// How many files `readWhole` may keep open between reads (0: it keeps none).
    var keptOpenFiles: Int { get }
    /// Creates `path` (which must not exist) with `bytes`, mode 600 whatever the umask (CONTRACT §8.9); with `sync`,
    /// flushes it to stable storage before closing.
    func createFile(_ path: String, bytes: [UInt8], sync: Bool) throws(FileSystemError)
    /// Atomically replaces `destination` with `source` (POSIX `rename`).
    func rename(_ source: String, to destination: String) throws(FileSystemError)
    /// Deletes a file.
    func unlink(_ path: String) throws(FileSystemError)
    /// The names in a folder, without `.` and `..`.
    func list(_ directory: String) throws(FileSystemError) -> [String]
    /// Creates one folder, mode 700 whatever the umask; succeeds when it already exists (and leaves it as it is).
    func makeDirectory(_ path: String) throws(FileSystemError)
    /// Takes every permission of group and others away from a file or folder the tier made (one written by an
    /// earlier version, before CONTRACT §8.9): 600 for a file, 700 for a folder. A link is not followed; anything
    /// else (missing, not the tier's to change) is left as it is.
    func restrictAccess(_ path: String)
    /// Flushes a folder's entries (after a rename) to stable storage.
    func syncDirectory(_ path: String) throws(FileSystemError)
}

extension DiskFileSystem {
    /// Nothing (a file system without modes).
    public func restrictAccess(_ path: String) {}

    /// None kept.
    public var keptOpenFiles: Int { 0 }

    /// `readWhole` through `read`.
    public func readWhole(_ path: String, upTo limit: Int) -> [UInt8]? {
        (try? read(path, upTo: min(limit, Int.max - 1) + 1))?.whole(upTo: limit)
    }

    /// `readWhole` of the path.
    public func readWhole(
        entry key: String, hash: Int, in root: String, at path: () -> String, upTo limit: Int
    ) -> [UInt8]? {
        readWhole(path(), upTo: limit)
    }
}

/// A file's first bytes with its size, modification time, permission bits and whether a path still names it.
public struct FileContents: Sendable, Equatable {
    public var bytes: [UInt8]
    public var size: Int
    public var modified: Date
    /// The permission bits (`st_mode & 0o7777`).
    public var permissions: UInt32
    /// False once the file has been renamed over or deleted (`st_nlink` 0): read from a descriptor opened before.
    public var isLinked: Bool

    public init(bytes: [UInt8], size: Int, modified: Date, permissions: UInt32 = 0o600, isLinked: Bool = true) {
        self.bytes = bytes
        self.size = size
        self.modified = modified
        self.permissions = permissions
        self.isLinked = isLinked
    }

    /// The bytes when they are the whole file and it is at most `limit` bytes long.
    func whole(upTo limit: Int) -> [UInt8]? {
        bytes.count == size && size <= limit ? bytes : nil
    }
}

/// A failed file operation with its `errno`.
public struct FileSystemError: Error, Sendable, Equatable, CustomStringConvertible {
    public var operation: String
    public var code: Int32

    public init(_ operation: String, code: Int32) {
        self.operation = operation
        self.code = code
    }

    package var isNotFound: Bool { code == ENOENT || code == ENOTDIR }

    /// A symbolic link, FIFO, socket, device or folder where an entry file should be: never read, treated as corrupt.
    public static let notRegularFile = FileSystemError("open: not a regular file", code: ELOOP)
    package var isNotRegularFile: Bool { code == ELOOP }
    public var description: String { "\(operation): \(String(cString: strerror(code))) (errno \(code))" }
}
