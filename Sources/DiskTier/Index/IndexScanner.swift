import Foundation
import UnifiedCache

/// Walks the data dir once at start-up: sweeps temporary files left by a crashed process and reads
/// the header (never the body) of every entry file. Runs off the tier's actor, so it deletes only
/// temporary files (which carry another instance's token); entry files it doubts are reported to the
/// tier, which decides on its own executor.
struct IndexScanner: Sendable {
    struct Found: Sendable {
        var entry: IndexedEntry
        var modified: Date
    }

    struct Result: Sendable {
        var found: [Found] = []
        /// Paths of entry files whose header or size did not verify.
        var suspect: [String] = []
        /// Paths of files that do not open, as a read finds them (§9.2): sealed under another entry's name (moved),
        /// or plaintext where the key ring refuses it.
        var undecryptable: [String] = []
        var temporaryFilesSwept = 0
        var readErrors: [FileSystemError] = []
    }

    let fileSystem: any DiskFileSystem
    let layout: DiskLayout
    /// Temporary files with this prefix belong to the running instance and are left alone.
    let ownTemporaryPrefix: String
    /// Whether a plaintext entry opens (`EntryCodec.acceptsPlaintext`): not with a key ring, outside a migration.
    let acceptsPlaintext: Bool

    func scan() -> Result {
        var result = Result()
        for first in DiskLayout.firstLevel {
            let firstPath = "\(layout.root)/\(first)"
            let seconds = list(firstPath, into: &result)
            // Folders an earlier version made 755 become 700 (CONTRACT §8.9).
            if !seconds.isEmpty { fileSystem.restrictAccess(firstPath) }
            for second in seconds where second.utf8.count == 2 {
                let folder = "\(firstPath)/\(second)"
                fileSystem.restrictAccess(folder)
                for name in list(folder, into: &result) {
                    scanFile(named: name, in: folder, into: &result)
                }
            }
        }
        // Temporary files can also be left in the root (the start-up probe).
        for name in list(layout.root, into: &result) { sweepIfTemporary(name, in: layout.root, into: &result) }
        return result
    }

    private func list(_ folder: String, into result: inout Result) -> [String] {
        do {
            return try fileSystem.list(folder)
        } catch {
            if !error.isNotFound { result.readErrors.append(error) }
            return []
        }
    }

    private func scanFile(named name: String, in folder: String, into result: inout Result) {
        if sweepIfTemporary(name, in: folder, into: &result) { return }
        guard DiskLayout.isEntryFileName(name) else { return }
        let path = "\(folder)/\(name)"
        switch inspect(path, named: name) {
        case .found(let found): result.found.append(found)
        case .suspect: result.suspect.append(path)
        case .undecryptable: result.undecryptable.append(path)
        case .gone: break  // Removed by the running tier since the listing: nothing to index.
        case .failed(let error): result.readErrors.append(error)
        }
    }

    enum Outcome: Sendable {
        case found(Found)
        case suspect
        /// A file that does not open: sealed, with a header that names another key than its file name's (it was moved),
        /// or plaintext where the key ring refuses it (it needs no secret to forge).
        case undecryptable
        case gone
        case failed(FileSystemError)
    }

    /// Reads and verifies one entry file's header (and that its size and name agree with it).
    func inspect(_ path: String, named name: String) -> Outcome {
        do {
            guard let header = try readHeader(path) else { return .suspect }
            // A file an earlier version wrote 644 becomes 600 (CONTRACT §8.9).
            if header.permissions & 0o077 != 0 { fileSystem.restrictAccess(path) }
            // The key first, as a read checks it: a sealed value under another key's name is undecryptable.
            guard DiskLayout.fileName(for: header.header.metadata.key) == name else {
                return header.header.isSealed ? .undecryptable : .suspect
            }
            guard header.header.isSealed || acceptsPlaintext else { return .undecryptable }
            guard header.size == header.header.fileSize else { return .suspect }
            let entry = IndexedEntry(metadata: header.header.metadata, fileSize: header.size)
            return .found(Found(entry: entry, modified: header.modified))
        } catch {
            if error.isNotRegularFile { return .suspect }
            return error.isNotFound ? .gone : .failed(error)
        }
    }

    /// The verified header with the file's size, time and permission bits, or `nil` when it does not verify.
    private func readHeader(_ path: String) throws(FileSystemError) -> (
        header: EntryHeader, size: Int, modified: Date, permissions: UInt32
    )? {
        var contents = try fileSystem.read(path, upTo: EntryFormat.typicalHeaderRead)
        do throws(EntryFormatError) {
            return (try EntryFormat.decodeHeader(contents.bytes), contents.size, contents.modified, contents.permissions)
        } catch .truncated(let needed) where needed <= contents.size && needed > contents.bytes.count {
            contents = try fileSystem.read(path, upTo: needed)
            guard let header = try? EntryFormat.decodeHeader(contents.bytes) else { return nil }
            return (header, contents.size, contents.modified, contents.permissions)
        } catch {
            return nil
        }
    }

    @discardableResult
    private func sweepIfTemporary(_ name: String, in folder: String, into result: inout Result) -> Bool {
        guard name.hasPrefix(DiskLayout.temporaryPrefix) else { return false }
        guard !name.hasPrefix(ownTemporaryPrefix) else { return true }
        do {
            try fileSystem.unlink("\(folder)/\(name)")
            result.temporaryFilesSwept += 1
        } catch {
            if !error.isNotFound { result.readErrors.append(error) }
        }
        return true
    }
}
