// Child process of DiskTierTests' crash test: stores entries in a loop until it is killed (SIGKILL).
// Usage: disktier-crash-writer <data-dir> <first-version>
// After each acknowledged store it prints "stored <key> <version>" on stdout. The body of version v is
// `CrashWriterBody.make(v % 16)`, so the test can tell a complete value from a damaged one. The bodies are
// made up front so that the loop spends its time storing, and a kill often lands inside a write.
import Clocks
import DiskTier
import Foundation
import Logging
import UnifiedCache

guard CommandLine.arguments.count == 3, let firstVersion = Int(CommandLine.arguments[2]) else {
    FileHandle.standardError.write(Data("usage: disktier-crash-writer <data-dir> <first-version>\n".utf8))
    exit(2)
}
var logger = Logger(label: "disktier-crash-writer")
logger.logLevel = .error
let configuration = DiskTierConfiguration(directory: CommandLine.arguments[1], limitBytes: 1 << 30)
let tier = try await DiskTier.open(configuration, clock: SystemWallClock(), ticker: ContinuousClock(), logger: logger)
let now = Date()
let bodies = (0..<16).map(CrashWriterBody.make)
var version = firstVersion
while true {
    let key = "crash:k\(version % 32)"
    let entry = CacheEntry(
        key: key, namespace: "raw", user: nil, body: bodies[version % 16],
        contentType: "application/octet-stream", etag: "\"v\(version)\"",
        storedAt: now, expiresAt: now + 3600, staleUntil: now + 3600)
    if await tier.store(entry) {
        FileHandle.standardOutput.write(Data("stored \(key) \(version)\n".utf8))
    }
    version += 1
}

/// The body of version `v`: 1 to ~256 KiB of bytes that depend on `v` (kept in sync with the test's copy).
enum CrashWriterBody {
    static func make(_ version: Int) -> [UInt8] {
        let count = 1 + (version &* 7919) % 262_144
        var state = UInt32(truncatingIfNeeded: version &* 2_654_435_761 &+ 1)
        return (0..<count).map { _ in
            state = state &* 1_664_525 &+ 1_013_904_223
            return UInt8(truncatingIfNeeded: state >> 24)
        }
    }
}
