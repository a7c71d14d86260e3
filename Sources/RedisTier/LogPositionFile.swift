import Foundation
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where an instance keeps its log checkpoint across restarts: one line, `v1 EPOCH POSITION`, in its data folder
/// (next to the disk tier's entry folders, which the tier's index never reads). Replaced atomically: written to a
/// temporary file, `fsync`ed, renamed over the old one, and the folder `fsync`ed, so after a crash (or a power
/// loss) the file holds an old or a new checkpoint, never a torn one. Callers write a checkpoint only once what
/// it claims is applied, so it can lag behind the local tiers, never run ahead of them.
struct LogPositionFile: Sendable {
    let path: String
    /// One write at a time (they share the temporary file's name).
    private let writing = NIOLock()

    init(path: String) { self.path = path }

    /// The checkpoint written last, or `nil` (no file, or one this version does not read).
    func load() -> LogCheckpoint? {
        guard let data = FileManager.default.contents(atPath: path) else { return nil }
        let fields = String(decoding: data, as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "\n" })
        guard fields.count == 3, fields[0] == "v1", let position = LogPosition(fields[2]) else { return nil }
        return LogCheckpoint(epoch: String(fields[1]), position: position)
    }

    /// Replaces the file with `checkpoint`; `false` when it could not be written (the old one then stays).
    @discardableResult
    func save(_ checkpoint: LogCheckpoint) -> Bool {
        let line = Array("v1 \(checkpoint.epoch) \(checkpoint.position)\n".utf8)
        let temporary = path + ".tmp"
        return writing.withLock {
            // Mode 600 whatever the umask, and even when an older temporary file is reused (CONTRACT §8.9).
            let descriptor = open(temporary, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC | O_NOFOLLOW, 0o600)
            guard descriptor >= 0 else { return false }
            guard fchmod(descriptor, 0o600) == 0 else {
                close(descriptor)
                return false
            }
            let written = line.withUnsafeBytes { write(descriptor, $0.baseAddress, $0.count) }
            let synced = fsync(descriptor) == 0
            close(descriptor)
            guard written == line.count, synced, rename(temporary, path) == 0 else {
                unlink(temporary)
                return false
            }
            let folder = open((path as NSString).deletingLastPathComponent, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
            if folder >= 0 {
                _ = fsync(folder)
                close(folder)
            }
            return true
        }
    }
}
