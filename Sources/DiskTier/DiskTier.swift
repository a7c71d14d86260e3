import Clocks
import Foundation
import Logging
import UnifiedCache

/// The disk tier: one verified file per entry under the data dir, an in-memory index over them whose policy
/// (`--eviction`) decides which go when the byte budget is full, and faults that degrade to misses instead of errors.
///
/// An actor on its own serial dispatch queue (`DispatchQueueExecutor`): file I/O is blocking but runs
/// off the cooperative pool, and every change to a file and to the index happens in one serial order.
/// Counters live in `DiskTierCounters` (behind a lock, outside the actor) so `statistics()` and `health()`
/// answer without awaiting.
public actor DiskTier: SecondTier {
    let configuration: DiskTierConfiguration
    let fileSystem: any DiskFileSystem
    let layout: DiskLayout
    let clock: any WallClock
    /// Readings of the process's monotonic clock: the pace of the sweeps, the start-up scan's length.
    let elapsed: Elapsed
    let logger: Logger
    /// Seals what the tier writes when there is a key ring; reads both forms.
    let codec: EntryCodec
    let counters: DiskTierCounters
    /// Keys read on callers' threads (`loadNow`), recorded in the index before the next eviction.
    let recentReads = RecentReads()
    /// Marks this instance's temporary files so the start-up sweep never removes a write in progress.
    let temporaryPrefix: String
    private let executor: DispatchQueueExecutor

    var index: DiskIndex
    var temporarySequence = 0
    var rebuild: Task<Void, Never>?
    /// Keys whose files this instance changed while the start-up scan ran: the scan's view of them is outdated.
    var touchedDuringRebuild: Set<String> = []
    var rebuilding = true
    /// Keys whose file could not be deleted (read-only disk): never served by this instance, and deleted by a later
    /// removal that covers them (by the metadata they were indexed with, when they were).
    var undeletable: [String: Undeletable] = [:]
    /// When `checkedHealth` last probed the data dir (the tier's elapsed time).
    var lastProbe: Duration?

    public nonisolated var unownedExecutor: UnownedSerialExecutor { executor.asUnownedSerialExecutor() }

    /// Validates the data dir (creating it if missing), sweeps crash leftovers and rebuilds the index in the
    /// background; the tier answers at once (a key not yet indexed is looked up by its path). `codec` seals
    /// every write under its key ring's primary (CONTRACT §9); the default writes plaintext. `clock` dates the
    /// entries; `ticker`, the process's monotonic clock, paces the sweeps (`run`) and times the start-up scan.
    public static func open(
        _ configuration: DiskTierConfiguration,
        codec: EntryCodec = EntryCodec(),
        fileSystem: any DiskFileSystem = POSIXFileSystem(),
        clock: any WallClock,
        ticker: any Clock<Duration>,
        logger: Logger = Logger(label: "unicache.disk-tier")
    ) async throws(DiskTierError) -> DiskTier {
        let tier = try DiskTier(
            configuration: configuration, codec: codec, fileSystem: fileSystem, clock: clock, ticker: ticker,
            logger: logger)
        await tier.startIndexRebuild()
        return tier
    }

    private init(
        configuration: DiskTierConfiguration, codec: EntryCodec, fileSystem: any DiskFileSystem, clock: any WallClock,
        ticker: any Clock<Duration>, logger: Logger
    ) throws(DiskTierError) {
        guard configuration.limitBytes > 0 else { throw .invalidLimit(configuration.limitBytes) }
        var configuration = configuration
        configuration.directory = Self.absolute(configuration.directory)
        self.configuration = configuration
        self.fileSystem = fileSystem
        self.layout = DiskLayout(root: configuration.directory)
        self.clock = clock
        elapsed = Elapsed(ticker)
        self.logger = logger
        self.codec = codec
        self.counters = DiskTierCounters(limitBytes: configuration.limitBytes)
        self.index = DiskIndex(eviction: configuration.eviction, limitBytes: configuration.limitBytes)
        self.temporaryPrefix = "\(DiskLayout.temporaryPrefix)\(UUID().uuidString.prefix(8))-"
        self.executor = DispatchQueueExecutor(label: "unicache.disk-tier")
        do throws(FileSystemError) {
            try Self.makeDirectories(layout.root, fileSystem: fileSystem)
            let probe = "\(layout.root)/\(temporaryPrefix)probe"
            try fileSystem.createFile(probe, bytes: [], sync: false)
            try fileSystem.unlink(probe)
        } catch {
            throw .dataDirectoryUnusable(path: configuration.directory, reason: error.description)
        }
        warnIfDataDirectoryIsOpen()
    }

    /// A data dir the service made is 700 (CONTRACT §8.9); one that existed is left as it is (it may be a mount
    /// point, or the operator's), with a warning when its group or others may use it.
    private nonisolated func warnIfDataDirectoryIsOpen() {
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: layout.root),
            let mode = (attributes[.posixPermissions] as? NSNumber)?.intValue, mode & 0o077 != 0
        else { return }
        logger.warning(
            "the data dir lets its group or others in; its files are 600 and the folders the service makes 700, but file names and sizes are listed to them (chmod 700 it)",
            metadata: ["path": "\(layout.root)", "mode": "\(String(mode & 0o777, radix: 8))"])
    }

    // MARK: SecondTier

    public func load(_ key: String) async -> CacheEntry? {
        guard undeletable[key] == nil else { return nil }
        let contents: FileContents
        do {
            contents = try readFile(for: key)
        } catch {
            if error.isNotFound {
                forget(key)
            } else if error.isNotRegularFile {
                discardCorrupt(key: key, reason: error)
            } else if counters.readFailed(error.description) {
                logger.warning("disk tier read failed", metadata: ["error": "\(error)"])
            }
            return nil
        }
        counters.readSucceeded()
        let entry: CacheEntry
        do {
            entry = try codec.decode(contents.bytes, fileSize: contents.size, key: key).entry
        } catch {
            discardCorrupt(key: key, reason: error)
            return nil
        }
        guard clock.now() < entry.staleUntil else {
            delete(key)
            return nil
        }
        if let indexed = index[key] {
            // A sealed header read alone gave an upper bound of the body's length (CONTRACT §9.7): now it is known.
            // (`loadNow` leaves the index alone: the bound stays until a read here or a new write.)
            if indexed.metadata.bytes != entry.body.count {
                index.insert(key, IndexedEntry(metadata: entry.metadata, fileSize: indexed.fileSize))
            } else {
                index.touch(key)
            }
        } else {
            index.insert(key, IndexedEntry(metadata: entry.metadata, fileSize: contents.size))
            if !rebuilding { makeRoom(keeping: key) }
            publishSize()
        }
        return entry
    }

    @discardableResult
    public func store(_ entry: CacheEntry) async -> Bool {
        let key = entry.key
        // The previous version goes either way: replaced on success, deleted on failure (never served outdated).
        forget(key)
        noteTouched(key)
        let bytes: [UInt8]
        do { bytes = try codec.encode(entry) } catch {
            delete(key)
            if counters.writeFailed(error.description) { logger.warning("disk tier degraded: sealing failed") }
            return false
        }
        guard bytes.count <= configuration.limitBytes else {
            logger.debug("entry larger than the disk budget, not stored", metadata: ["bytes": "\(bytes.count)"])
            delete(key)
            return false
        }
        // The new entry enters the index (its policy's window) first, so that only others compete for the room.
        index.insert(key, IndexedEntry(metadata: entry.metadata, fileSize: bytes.count))
        makeRoom(keeping: key)
        do throws(FileSystemError) {
            try writeFile(bytes, for: key)
        } catch {
            delete(key)
            if counters.writeFailed(error.description) {
                logger.warning("disk tier degraded: write failed", metadata: ["error": "\(error)"])
            }
            return false
        }
        if undeletable.removeValue(forKey: key) != nil { counters.setHoldsUndeletable(!undeletable.isEmpty) }
        publishSize()
        if counters.writeSucceeded() { logger.info("disk tier recovered: writes succeed again") }
        return true
    }

    /// `key`'s file, read whole: no valid file is larger than the budget, so a bigger one is not read whole (it
    /// fails to verify).
    nonisolated func readFile(for key: String) throws(FileSystemError) -> FileContents {
        try fileSystem.read(layout.path(for: key), upTo: min(configuration.limitBytes, Int.max - 1) + 1)
    }

    public nonisolated func statistics() -> SecondTierStatistics { counters.statistics }

    public nonisolated func health() -> String? { counters.health }
}
