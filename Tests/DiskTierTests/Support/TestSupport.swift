import Clocks
import Foundation
import Logging
import TestSupport
import UnifiedCache

@testable import DiskTier

let testLogger: Logger = {
    var logger = Logger(label: "disktier-tests")
    logger.logLevel = .error
    return logger
}()
let epoch = Date(timeIntervalSinceReferenceDate: 800_000_000)

func makeEntry(
    _ key: String, body: [UInt8]? = nil, namespace: String = "raw", user: String? = nil,
    storedAt: Date = epoch, ttl: TimeInterval = 3600, stale: TimeInterval = 0
) -> CacheEntry {
    let body = body ?? Array("body of \(key)".utf8)
    return CacheEntry(
        key: key, namespace: namespace, user: user, body: body, contentType: "application/json",
        etag: "\"etag-\(key)\"", storedAt: storedAt, expiresAt: storedAt + ttl,
        staleUntil: storedAt + ttl + stale)
}

func openTier(
    _ directory: String, limit: Int = 1 << 30, fileSystem: any DiskFileSystem = POSIXFileSystem(),
    clock: any WallClock = ManualWallClock(epoch), codec: EntryCodec = EntryCodec(), ticker: ManualClock = ManualClock()
) async throws -> DiskTier {
    try await DiskTier.open(
        DiskTierConfiguration(directory: directory, limitBytes: limit), codec: codec, fileSystem: fileSystem,
        clock: clock, ticker: ticker, logger: testLogger)
}

/// Every regular file under `directory`, recursively, with its size.
func filesOnDisk(_ directory: String) -> [(path: String, size: Int)] {
    guard let walker = FileManager.default.enumerator(atPath: directory) else { return [] }
    var files: [(String, Int)] = []
    while let relative = walker.nextObject() as? String {
        let path = "\(directory)/\(relative)"
        guard let attributes = try? FileManager.default.attributesOfItem(atPath: path),
            attributes[.type] as? FileAttributeType == .typeRegular
        else { continue }
        files.append((path, (attributes[.size] as? NSNumber)?.intValue ?? 0))
    }
    return files
}

func entryPath(_ directory: String, _ key: String) -> String {
    DiskLayout(root: directory).path(for: key)
}

/// Puts `bytes` where the tier in `directory` keeps `key`'s file (its folder made first), as someone with write access
/// to the folder would; returns the path.
@discardableResult
func plant(_ bytes: [UInt8], as key: String, in directory: String) throws -> String {
    let path = entryPath(directory, key)
    try FileManager.default.createDirectory(
        atPath: (path as NSString).deletingLastPathComponent, withIntermediateDirectories: true)
    try Data(bytes).write(to: URL(fileURLWithPath: path))
    return path
}
