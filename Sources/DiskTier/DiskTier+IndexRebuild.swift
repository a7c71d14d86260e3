import Clocks
import Logging
import UnifiedCache

/// The start-up scan: sweep crash leftovers, rebuild the index from headers, in the background.
extension DiskTier {
    func startIndexRebuild() {
        rebuild = Task { await self.rebuildIndex() }
    }

    /// Returns once the start-up index rebuild has finished.
    public func waitUntilIndexed() async {
        await rebuild?.value
    }

    private func rebuildIndex() async {
        let started = elapsed.now()
        let scanner = IndexScanner(
            fileSystem: fileSystem, layout: layout, ownTemporaryPrefix: temporaryPrefix,
            acceptsPlaintext: codec.acceptsPlaintext)
        // The walk blocks on file I/O for a while: a queue of its own, neither the pool nor this actor's.
        let result = await Blocking.run(label: "unicache.disk-index-scan") { scanner.scan() }
        let (corrupt, undecryptable) = merge(result, scanner: scanner)
        rebuilding = false
        touchedDuringRebuild = []
        makeRoom(keeping: nil)
        publishSize()
        for error in result.readErrors { counters.readFailed(error.description) }
        let duration = elapsed.now() - started
        logger.info(
            "disk tier index rebuilt",
            metadata: [
                "entries": "\(index.count)", "bytes": "\(index.totalBytes)", "corrupt": "\(corrupt)",
                "undecryptable": "\(undecryptable)",
                "temporaryFilesSwept": "\(result.temporaryFilesSwept)", "readErrors": "\(result.readErrors.count)",
                "duration": "\(duration)", "keptOpenFiles": "\(fileSystem.keptOpenFiles)",
            ])
    }

    /// Adds what the scan found, least recently written as least recently used. Keys this instance already
    /// touched are skipped (its view is newer); doubtful files are checked again here, where no store can
    /// interleave, and deleted if they still do not verify (or still do not open: sealed under another entry's name,
    /// or plaintext the key ring refuses). Returns the numbers of corrupt and of undecryptable files deleted.
    private func merge(_ result: IndexScanner.Result, scanner: IndexScanner) -> (corrupt: Int, undecryptable: Int) {
        let now = clock.now()
        var expired: [String] = []
        index.reserveCapacity(index.count + result.found.count)
        for found in result.found.sorted(by: { $0.modified > $1.modified }) {
            let key = found.entry.metadata.key
            guard index[key] == nil, !touchedDuringRebuild.contains(key) else { continue }
            if found.entry.metadata.staleUntil <= now {
                expired.append(key)
            } else {
                index.insert(key, found.entry, leastRecent: true)
            }
        }
        for key in expired { delete(key) }
        let corrupt = deleteDoubtful(result.suspect, still: .suspect, scanner: scanner)
        let undecryptable = deleteDoubtful(result.undecryptable, still: .undecryptable, scanner: scanner)
        if corrupt > 0 {
            counters.addCorrupt(corrupt)
            logger.warning("disk tier: corrupt files deleted at start-up", metadata: ["count": "\(corrupt)"])
        }
        if undecryptable > 0 {
            counters.addUndecryptable(undecryptable)
            logger.warning(
                "disk tier: files that do not open (sealed under another entry's name, or plaintext) deleted at start-up",
                metadata: ["count": "\(undecryptable)"])
        }
        return (corrupt, undecryptable)
    }

    /// Deletes each of `paths` that the scanner still finds `doubt` now; returns how many it deleted.
    private func deleteDoubtful(_ paths: [String], still doubt: IndexScanner.Outcome, scanner: IndexScanner) -> Int {
        var deleted = 0
        for path in paths {
            guard scanner.inspect(path, named: String(path.suffix(64))).isSame(as: doubt) else { continue }
            do {
                try fileSystem.unlink(path)
                deleted += 1
            } catch {
                if !error.isNotFound { counters.writeFailed(error.description) }
            }
        }
        return deleted
    }
}

extension IndexScanner.Outcome {
    /// Whether both are `.suspect`, or both `.undecryptable`.
    fileprivate func isSame(as other: Self) -> Bool {
        switch (self, other) {
        case (.suspect, .suspect), (.undecryptable, .undecryptable): true
        default: false
        }
    }
}
