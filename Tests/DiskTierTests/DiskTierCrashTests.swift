import Foundation
import TestSupport
import Testing
import UnifiedCache

@testable import DiskTier

/// A child process (`disktier-crash-writer`) stores entries in a loop and is killed with SIGKILL at a random
/// point of its progress; a new tier on the folder then serves only complete values, including every value
/// the child acknowledged, and its start-up sweep leaves no temporary file.
@Suite(.timeLimit(.minutes(10))) struct DiskTierCrashTests {
    /// Copy of the writer's `CrashWriterBody.make`.
    static func expectedBody(_ version: Int) -> [UInt8] {
        let count = 1 + (version &* 7919) % 262_144
        var state = UInt32(truncatingIfNeeded: version &* 2_654_435_761 &+ 1)
        return (0..<count).map { _ in
            state = state &* 1_664_525 &+ 1_013_904_223
            return UInt8(truncatingIfNeeded: state >> 24)
        }
    }

    /// The writer is built next to the test bundle (`swift test` builds every target).
    static func writerPath() throws -> String {
        let me = try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")
        var folder = URL(fileURLWithPath: me).deletingLastPathComponent()
        // On Linux the bundle is the test executable itself, in the build folder.
        if folder.lastPathComponent == "MacOS" { folder = folder.deletingLastPathComponent() }
        return folder.appendingPathComponent("disktier-crash-writer").path
    }

    /// Runs one writer until it has acknowledged `stopAfter` stores, kills it, and returns every acknowledged
    /// (key, version), including those printed between the count and the kill. The reads and the wait block: they
    /// run on a thread of their own, not on the cooperative pool.
    static func runAndKill(writer: String, dir: String, firstVersion: Int, stopAfter: Int) async throws -> [(String, Int)] {
        let (output, killedBySignal) = try await onThread { () throws -> (Data, Bool) in
            let process = Process()
            process.executableURL = URL(fileURLWithPath: writer)
            process.arguments = [dir, "\(firstVersion)"]
            let pipe = Pipe()
            process.standardOutput = pipe
            process.standardError = FileHandle.nullDevice
            try process.run()
            var output = Data()
            var killed = false
            while true {
                let chunk = pipe.fileHandleForReading.availableData  // blocks until data or end of file
                if chunk.isEmpty { break }
                output += chunk
                if !killed, output.count(where: { $0 == UInt8(ascii: "\n") }) >= stopAfter {
                    kill(process.processIdentifier, SIGKILL)
                    killed = true
                }
            }
            process.waitUntilExit()
            return (output, process.terminationReason == .uncaughtSignal)
        }
        #expect(killedBySignal)
        return String(decoding: output, as: UTF8.self).split(separator: "\n").compactMap { line in
            let parts = line.split(separator: " ")
            guard parts.count == 3, parts[0] == "stored", let version = Int(parts[2]) else { return nil }
            return (String(parts[1]), version)
        }
    }

    @Test func killedWritersLeaveOnlyCompleteValuesAndNoTemporaryFiles() async throws {
        let writer = try Self.writerPath()
        try #require(FileManager.default.isExecutableFile(atPath: writer), "build the package first: \(writer)")
        try await withTemporaryFolder { dir in
            var acknowledged: [String: Int] = [:]
            for round in 0..<4 {
                // Each round's versions are above the previous round's, so the newest value has the highest.
                let stored = try await Self.runAndKill(
                    writer: writer, dir: dir, firstVersion: round * 1_000_000, stopAfter: Int.random(in: 5...80))
                for (key, version) in stored {
                    acknowledged[key] = max(acknowledged[key] ?? -1, version)
                }
            }
            #expect(!acknowledged.isEmpty)

            let tier = try await openTier(dir)
            await tier.waitUntilIndexed()
            #expect(!filesOnDisk(dir).contains { $0.path.contains(DiskLayout.temporaryPrefix) })
            #expect(tier.statistics().corrupt == 0)
            for entry in await tier.list(prefix: "crash:", limit: 100) {
                let loaded = try #require(await tier.load(entry.key))
                let version = try #require(Int(loaded.etag.dropFirst(2).dropLast()))
                #expect(loaded.body == Self.expectedBody(version % 16))
                #expect(version >= acknowledged[entry.key] ?? 0)
            }
            // Every acknowledged store survived the crash.
            for key in acknowledged.keys { #expect(await tier.load(key) != nil) }
        }
    }
}
