import Crypto
import Foundation
import Sealing
import TestSupport
import Testing
import UnifiedCache

@testable import DiskTier

/// CONTRACT §9 in the disk tier: every file sealed with a key ring, what does not open deleted and counted as
/// undecryptable (never served), rotation and rekey in the tier's own write order.
@Suite(.timeLimit(.minutes(10))) struct DiskTierSealingTests {
    static func codec(_ ids: String..., migrate: Bool = false) -> EntryCodec {
        // Valid by construction: 32-byte keys, distinct IDs of the allowed characters.
        EntryCodec(
            keyRing: try! KeyRing(keys: ids.map { ($0, Array(SHA256.hash(data: Array($0.utf8)))) }),
            acceptPlaintext: migrate)
    }

    static let marker = Array("DISK-MARKER-5e1f".utf8)

    func entry(_ key: String) -> CacheEntry {
        makeEntry(key, body: [0, 1, 255] + Self.marker + Array(key.utf8))
    }

    func everyFileByte(_ dir: String) throws -> [[UInt8]] {
        try filesOnDisk(dir).map { try [UInt8](Data(contentsOf: URL(fileURLWithPath: $0.path))) }
    }

    @Test func sealedFilesHoldNoBodyAndServeAfterARestart() async throws {
        try await withTemporaryFolder { dir in
            let tier = try await openTier(dir, codec: Self.codec("k1"))
            await tier.waitUntilIndexed()
            for i in 0..<5 { #expect(await tier.store(entry("raw:s\(i)"))) }
            let files = try everyFileByte(dir)
            #expect(files.count == 5)
            #expect(files.allSatisfy { !$0.contains(subsequence: Self.marker) })
            let restarted = try await openTier(dir, codec: Self.codec("k1"))
            await restarted.waitUntilIndexed()
            #expect(restarted.statistics().entries == 5)
            for i in 0..<5 { #expect(await restarted.load("raw:s\(i)") == entry("raw:s\(i)")) }
            // Without a ring, the same files are written in the clear (the scan above would see them).
            let plain = try await openTier(dir + "/plain")
            await plain.store(entry("raw:p"))
            #expect(try everyFileByte(dir + "/plain").contains { $0.contains(subsequence: Self.marker) })
        }
    }

    @Test func whatDoesNotOpenIsDeletedCountedAndNeverServed() async throws {
        try await withTemporaryFolder { dir in
            let tier = try await openTier(dir, codec: Self.codec("k1"))
            await tier.waitUntilIndexed()
            await tier.store(entry("raw:a"))
            await tier.store(entry("raw:b"))
            await tier.store(entry("raw:c"))
            // A file copied over another entry's file name.
            try FileManager.default.removeItem(atPath: entryPath(dir, "raw:b"))
            try FileManager.default.copyItem(atPath: entryPath(dir, "raw:a"), toPath: entryPath(dir, "raw:b"))
            #expect(await tier.load("raw:b") == nil)
            #expect(!FileManager.default.fileExists(atPath: entryPath(dir, "raw:b")))
            // A flipped byte of the sealed part.
            var bytes = try [UInt8](Data(contentsOf: URL(fileURLWithPath: entryPath(dir, "raw:c"))))
            bytes[bytes.count - 30] ^= 0x01
            try Data(bytes).write(to: URL(fileURLWithPath: entryPath(dir, "raw:c")))
            #expect(await tier.load("raw:c") == nil)
            #expect(tier.statistics().undecryptable == 2)
            #expect(tier.statistics().corrupt == 0)
            #expect(await tier.load("raw:a") == entry("raw:a"))
            // A ring without the key: the file is as good as gone.
            let foreign = try await openTier(dir, codec: Self.codec("other"))
            await foreign.waitUntilIndexed()
            #expect(await foreign.load("raw:a") == nil)
            #expect(foreign.statistics().undecryptable == 1)
            #expect(filesOnDisk(dir).isEmpty)
        }
    }

    @Test func rotationReadsOldKeysAndRekeyMovesEveryFileToThePrimary() async throws {
        try await withTemporaryFolder { dir in
            // One tier at a time: each one's start-up scan sweeps the others' temporary files. The plaintext one last:
            // a key ring's scan deletes plaintext files outside a migration.
            let writers = [(Self.codec("k1"), "raw:k1"), (Self.codec("x"), "raw:foreign"), (EntryCodec(), "raw:plain")]
            for (codec, key) in writers {
                let writer = try await openTier(dir, codec: codec)
                await writer.waitUntilIndexed()
                #expect(await writer.store(entry(key)))
            }

            // A migration: the plaintext file is read and sealed.
            let rotated = try await openTier(dir, codec: Self.codec("k2", "k1", migrate: true))
            await rotated.waitUntilIndexed()
            #expect(await rotated.load("raw:plain") == entry("raw:plain"))
            #expect(await rotated.load("raw:k1") == entry("raw:k1"))
            await rotated.store(entry("raw:k2"))
            let report = await rotated.rekey()
            #expect(report == RekeyReport(rekeyed: 2, current: 1, undecryptable: 1))
            #expect(await rotated.rekey() == RekeyReport(rekeyed: 0, current: 3, undecryptable: 0))
            #expect(rotated.statistics().entries == 3)
            #expect(rotated.statistics().bytes == filesOnDisk(dir).reduce(0) { $0 + $1.size })

            let onlyNew = try await openTier(dir, codec: Self.codec("k2"))
            await onlyNew.waitUntilIndexed()
            for key in ["raw:plain", "raw:k1", "raw:k2"] { #expect(await onlyNew.load(key) == entry(key)) }
            #expect(onlyNew.statistics().undecryptable == 0)
            #expect(try everyFileByte(dir).allSatisfy { !$0.contains(subsequence: Self.marker) })
        }
    }

    @Test func withoutARingRekeyDoesNothing() async throws {
        try await withTemporaryFolder { dir in
            let tier = try await openTier(dir)
            await tier.store(entry("raw:a"))
            #expect(await tier.rekey() == RekeyReport())
        }
    }
}

extension Array where Element == UInt8 {
    func contains(subsequence: [UInt8]) -> Bool {
        guard !subsequence.isEmpty, subsequence.count <= count else { return false }
        return (0...(count - subsequence.count)).contains { self[$0..<($0 + subsequence.count)].elementsEqual(subsequence) }
    }
}
