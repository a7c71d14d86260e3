import UnifiedCache

/// How a disk tier is set up: where, how big, how durable.
public struct DiskTierConfiguration: Sendable, Equatable {
    /// The data dir (`--data-dir`); created if missing.
    public var directory: String
    /// The byte budget (`--disk-limit`): the files' sizes (header + body) never add up to more.
    public var limitBytes: Int
    /// `false` (default): a store returns once its file is renamed into place, which survives a crash of
    /// the process. `true`: also `fsync` the file and its folder, which survives power loss, at a few
    /// milliseconds per store on most disks.
    package var syncWrites: Bool
    /// What the tier keeps when it is full (`--eviction`).
    public var eviction: EvictionKind

    public init(directory: String, limitBytes: Int, syncWrites: Bool = false, eviction: EvictionKind = .tinyLFU) {
        self.directory = directory
        self.limitBytes = limitBytes
        self.syncWrites = syncWrites
        self.eviction = eviction
    }
}

/// Why a disk tier could not be opened.
public enum DiskTierError: Error, Sendable, Equatable, CustomStringConvertible {
    /// The data dir cannot be created or written; `reason` is the failing call and its error.
    case dataDirectoryUnusable(path: String, reason: String)
    /// Another running service holds the data dir's lock (`DataDirectoryLock`); `holder`: its process id.
    case dataDirectoryInUse(path: String, holder: Int?)
    /// The byte budget is not positive (a limit of 0 means: do not create the tier).
    case invalidLimit(Int)

    public var description: String {
        switch self {
        case .dataDirectoryUnusable(let path, let reason): "data dir \(path) is not writable: \(reason)"
        case .dataDirectoryInUse(let path, let holder):
            "data dir \(path) is in use by another unicache\(holder.map { " (pid \($0))" } ?? "")"
        case .invalidLimit(let limit): "disk limit must be positive, got \(limit)"
        }
    }
}
