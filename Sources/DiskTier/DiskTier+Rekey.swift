import UnifiedCache

/// `POST /v1/admin/rekey`'s disk part (CONTRACT §9.3).
extension DiskTier {
    /// Re-seals under the key ring's primary every file that is not (plaintext ones included). Each file is read,
    /// re-sealed and renamed into place in one step of the tier's serial order, so a store of the same key lands
    /// wholly before (and is the one re-sealed) or wholly after (and replaces it): never overwritten by an older
    /// value. Files that do not open are deleted and counted, as on a read. Without a key ring it does nothing.
    public func rekey() async -> RekeyReport {
        var report = RekeyReport()
        guard codec.keyRing != nil else { return report }
        await waitUntilIndexed()
        for key in index.metadata(where: { _ in true }).map(\.key) {
            rekey(key, into: &report)
            // Requests and writes go on between two files.
            await Task.yield()
        }
        makeRoom(keeping: nil)
        logger.info(
            "disk tier rekeyed",
            metadata: ["rekeyed": "\(report.rekeyed)", "current": "\(report.current)", "undecryptable": "\(report.undecryptable)"])
        return report
    }

    private func rekey(_ key: String, into report: inout RekeyReport) {
        guard let indexed = index[key], undeletable[key] == nil else { return }
        let bytes: [UInt8]
        do {
            let contents = try fileSystem.read(layout.path(for: key), upTo: indexed.fileSize + 1)
            guard contents.size == contents.bytes.count else {
                discardCorrupt(key: key, reason: EntryFormatError.lengthMismatch)
                report.undecryptable += 1
                return
            }
            bytes = contents.bytes
        } catch {
            if error.isNotFound { forget(key) }
            return
        }
        let resealed: [UInt8]?
        do { resealed = try codec.resealed(bytes, key: key) } catch {
            discardCorrupt(key: key, reason: error)
            report.undecryptable += 1
            return
        }
        guard let resealed else {
            report.current += 1
            return
        }
        do throws(FileSystemError) {
            try writeFile(resealed, for: key)
        } catch {
            if counters.writeFailed(error.description) {
                logger.warning("disk tier degraded: write failed", metadata: ["error": "\(error)"])
            }
            return
        }
        index.resize(key, fileSize: resealed.count)
        publishSize()
        report.rekeyed += 1
    }
}
