import Foundation
import NIOConcurrencyHelpers

#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// Where an instance keeps its log checkpoints across restarts, in its data folder (next to the disk tier's entry
/// folders, which the tier's index never reads): on one Redis one line, `v1 EPOCH POSITION`; on a cluster a position
/// per shard, `v2 SHARDS` then `SHARD EPOCH POSITION` lines (a file of another shard count is not read). Replaced atomically: written to a
/// temporary file, `fsync`ed, renamed over the old one, and the folder `fsync`ed, so after a crash (or a power
/// loss) the file holds an old or a new checkpoint, never a torn one. Callers write a checkpoint only once what
/// it claims is applied, so it can lag behind the local tiers, never run ahead of them.
struct LogPositionFile: Sendable {
    let path: String
    /// 1 on one Redis, else a cluster's shard count.
    let shards: Int
    /// One write at a time (they share the temporary file's name).
    private let writing = NIOLock()

    init(path: String, shards: Int = 1) {
        self.path = path
        self.shards = max(1, shards)
    }

    /// One Redis's checkpoint written last, or `nil` (no file, or one this version does not read).
    func load() -> LogCheckpoint? { loadShards()[0] }

    /// Replaces one Redis's checkpoint.
    @discardableResult
    func save(_ checkpoint: LogCheckpoint) -> Bool { save(shards: [0: checkpoint]) }

    /// The checkpoints written last by shard (empty: no file, or one this version or shard count does not read).
    func loadShards() -> [Int: LogCheckpoint] {
        guard let data = FileManager.default.contents(atPath: path) else { return [:] }
        let fields = String(decoding: data, as: UTF8.self).split(whereSeparator: { $0 == " " || $0 == "\n" })
        if shards == 1 {
            guard fields.count == 3, fields[0] == "v1", let position = LogPosition(fields[2]) else { return [:] }
            return [0: LogCheckpoint(epoch: String(fields[1]), position: position)]
        }
        guard fields.count >= 2, fields.count % 3 == 2, fields[0] == "v2", Int(fields[1]) == shards else { return [:] }
        var checkpoints: [Int: LogCheckpoint] = [:]
        for start in stride(from: 2, to: fields.count, by: 3) {
            guard let shard = Int(fields[start]), (0..<shards).contains(shard), let position = LogPosition(fields[start + 2])
            else { return [:] }
            checkpoints[shard] = LogCheckpoint(epoch: String(fields[start + 1]), position: position)
        }
        return checkpoints
    }

    /// Replaces the file with `checkpoints` (by shard); `false` when it could not be written (the old one then stays).
    @discardableResult
    func save(shards checkpoints: [Int: LogCheckpoint]) -> Bool {
        let text: String
        if shards == 1 {
            guard let checkpoint = checkpoints[0] else { return false }
            text = "v1 \(checkpoint.epoch) \(checkpoint.position)\n"
        } else {
            text = checkpoints.keys.sorted().reduce("v2 \(shards)\n") { text, shard in
                let checkpoint = checkpoints[shard]!
                return text + "\(shard) \(checkpoint.epoch) \(checkpoint.position)\n"
            }
        }
        let line = Array(text.utf8)
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
