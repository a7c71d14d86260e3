import Foundation
import TestSupport
import Testing
import UnifiedCache

@testable import DiskTier

@Suite(.timeLimit(.minutes(10))) struct DiskTierCorruptionTests {
    enum Damage: CaseIterable {
        case truncated, flippedBodyByte, zeroedHeader, emptied, appended
    }

    func damage(_ path: String, _ damage: Damage) throws {
        var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: path)))
        switch damage {
        case .truncated: bytes.removeLast(bytes.count / 3)
        case .flippedBodyByte: bytes[bytes.count - 100] ^= 0x04
        case .zeroedHeader: for i in 0..<EntryFormat.fixedLength { bytes[i] = 0 }
        case .emptied: bytes = []
        case .appended: bytes += [0x0a]
        }
        try Data(bytes).write(to: URL(fileURLWithPath: path))
    }

    @Test(arguments: Damage.allCases)
    func aDamagedFileIsAMissDeletedAndCounted(_ kind: Damage) async throws {
        try await withTemporaryFolder { dir in
            let tier = try await openTier(dir)
            // The start-up scan runs in the background: one that reached the folder after the damage would delete
            // and count the file itself (rightly) before the reads below (seen under ThreadSanitizer).
            await tier.waitUntilIndexed()
            let entry = makeEntry("raw:victim", body: Array(repeating: 0x41, count: 1000))
            #expect(await tier.store(entry))
            #expect(tier.loadNow(entry.key) == entry)
            try damage(entryPath(dir, entry.key), kind)

            // A read on the caller's thread never answers it and leaves deleting and counting it to `load`.
            #expect(tier.loadNow(entry.key) == nil)
            #expect(FileManager.default.fileExists(atPath: entryPath(dir, entry.key)) && tier.statistics().corrupt == 0)
            #expect(await tier.load(entry.key) == nil)
            #expect(!FileManager.default.fileExists(atPath: entryPath(dir, entry.key)))
            #expect(tier.statistics().corrupt == 1)
            #expect(tier.statistics().entries == 0)
            #expect(tier.statistics().bytes == 0)
        }
    }

    @Test func aFileHoldingAnotherKeyIsNeverServed() async throws {
        try await withTemporaryFolder { dir in
            let tier = try await openTier(dir)
            await tier.waitUntilIndexed()  // the start-up scan must not meet the planted file first
            await tier.store(makeEntry("raw:a"))
            // Simulate a hash collision: key b's path holds key a's file.
            let copy = try Data(contentsOf: URL(fileURLWithPath: entryPath(dir, "raw:a")))
            let target = try plant(Array(copy), as: "raw:b", in: dir)

            #expect(await tier.load("raw:b") == nil)
            #expect(tier.statistics().corrupt == 1)
            #expect(!FileManager.default.fileExists(atPath: target))
            #expect(await tier.load("raw:a") == makeEntry("raw:a"))
        }
    }

    @Test func damagedFilesFoundAtStartUpAreDeletedAndCounted() async throws {
        try await withTemporaryFolder { dir in
            let first = try await openTier(dir)
            for i in 0..<10 { await first.store(makeEntry("k\(i)", body: Array(repeating: UInt8(i), count: 300))) }
            try damage(entryPath(dir, "k1"), .zeroedHeader)
            try damage(entryPath(dir, "k2"), .truncated)
            try damage(entryPath(dir, "k3"), .flippedBodyByte)  // the header is fine: found on first load

            let second = try await openTier(dir)
            await second.waitUntilIndexed()
            #expect(second.statistics().corrupt == 2)
            #expect(second.statistics().entries == 8)
            #expect(await second.load("k3") == nil)
            #expect(second.statistics().corrupt == 3)
            #expect(filesOnDisk(dir).count == 7)
            for i in [0, 4, 5, 6, 7, 8, 9] { #expect(await second.load("k\(i)") != nil) }
        }
    }
}
