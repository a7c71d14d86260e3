import Foundation
import Logging
import UnifiedCache

/// File and index bookkeeping shared by the tier's operations.
extension DiskTier {
    /// Creates `path`, recreating its folders (and the data dir) when they are missing.
    func createFile(_ path: String, in folder: String, bytes: [UInt8]) throws(FileSystemError) {
        do {
            try fileSystem.createFile(path, bytes: bytes, sync: configuration.syncWrites)
        } catch where error.isNotFound {
            try Self.makeDirectories(folder, fileSystem: fileSystem)
            try fileSystem.createFile(path, bytes: bytes, sync: configuration.syncWrites)
        }
    }

    /// Writes `key`'s file whole, through a temporary file renamed into place (a reader sees the old file or the
    /// new one, never a part); the temporary file is removed when that fails.
    func writeFile(_ bytes: [UInt8], for key: String) throws(FileSystemError) {
        let name = DiskLayout.fileName(for: key)
        let folder = layout.directory(forFileName: name)
        let temporary = "\(folder)/\(temporaryPrefix)\(temporarySequence)"
        temporarySequence += 1
        do throws(FileSystemError) {
            try createFile(temporary, in: folder, bytes: bytes)
            try fileSystem.rename(temporary, to: "\(folder)/\(name)")
            if configuration.syncWrites { try fileSystem.syncDirectory(folder) }
        } catch {
            try? fileSystem.unlink(temporary)
            throw error
        }
    }

    /// `directory` from the working directory when it is relative.
    static func absolute(_ directory: String) -> String {
        directory.hasPrefix("/") ? directory : FileManager.default.currentDirectoryPath + "/" + directory
    }

    /// `mkdir -p`.
    static func makeDirectories(_ path: String, fileSystem: any DiskFileSystem) throws(FileSystemError) {
        var current = ""
        for component in path.split(separator: "/") {
            current += "/\(component)"
            try fileSystem.makeDirectory(current)
        }
    }

    enum Deletion: Equatable {
        case deleted, absent
        /// The file stays (why); the key is never served by this instance.
        case failed(String)
    }

    /// A file that could not be deleted, with the metadata it was indexed with (if it was), for the removals that
    /// cover it later.
    struct Undeletable {
        let metadata: CacheEntryMetadata?
    }

    /// Deletes `key`'s file and forgets it. A file that cannot be deleted is never served by this instance.
    @discardableResult
    func delete(_ key: String) -> Deletion {
        let metadata = index[key]?.metadata ?? undeletable[key]?.metadata
        forget(key)
        noteTouched(key)
        do {
            try fileSystem.unlink(layout.path(for: key))
            if undeletable.removeValue(forKey: key) != nil { counters.setHoldsUndeletable(!undeletable.isEmpty) }
            return .deleted
        } catch {
            if error.isNotFound {
                if undeletable.removeValue(forKey: key) != nil { counters.setHoldsUndeletable(!undeletable.isEmpty) }
                return .absent
            }
            undeletable[key] = Undeletable(metadata: metadata)
            counters.setHoldsUndeletable(true)
            if counters.writeFailed(error.description) {
                logger.warning("disk tier degraded: delete failed", metadata: ["error": "\(error)"])
            }
            return .failed(error.description)
        }
    }

    /// Drops `key` from the index (its file is gone or going).
    func forget(_ key: String) {
        if index.remove(key) != nil { publishSize() }
    }

    /// A file that does not verify, or (sealed) does not open, is deleted and counted; never served.
    func discardCorrupt(key: String, reason: any Error) {
        if (reason as? EntryFormatError)?.isUndecryptable == true {
            logger.warning("disk tier: a sealed file that does not open was deleted", metadata: ["reason": "\(reason)"])
            counters.addUndecryptable(1)
        } else {
            logger.warning("disk tier: corrupt file deleted", metadata: ["reason": "\(reason)"])
            counters.addCorrupt(1)
        }
        delete(key)
    }

    /// Deletes the entries the index's policy lets go so that the files fit the budget; never `keeping` (a store's
    /// own new entry).
    func makeRoom(keeping key: String?) {
        // Files read on callers' threads count as accessed before a victim is chosen.
        for read in recentReads.drain() { index.touch(read.key, hash: read.hash) }
        let victims = index.evict(keeping: key)
        for victim in victims { delete(victim) }
        if !victims.isEmpty {
            counters.addEvictions(victims.count)
            logger.debug("disk tier evicted entries", metadata: ["count": "\(victims.count)"])
        }
    }

    func noteTouched(_ key: String) {
        if rebuilding { touchedDuringRebuild.insert(key) }
    }

    func publishSize() {
        counters.setSize(entries: index.count, bytes: index.totalBytes, decisions: index.decisions)
    }
}
