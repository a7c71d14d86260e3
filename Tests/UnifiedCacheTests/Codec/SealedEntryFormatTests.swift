import Crypto
import Foundation
import Sealing
import Testing

@testable import UnifiedCache

/// CONTRACT §9.1 at the codec: with a key ring an entry is stored sealed — metadata readable for the index, but
/// no byte of the body, its ETag, its content type or a digest of the body in the clear — and bound to its key.
@Suite(.timeLimit(.minutes(10))) struct SealedEntryFormatTests {
    static func ring(_ ids: String...) -> KeyRing {
        // Valid by construction: 32-byte keys, distinct IDs of the allowed characters.
        try! KeyRing(keys: ids.map { id in (id, Array(SHA256.hash(data: Array(id.utf8)))) })
    }

    let marker = Array("MARKER-c0ffee-body".utf8)
    var entry: CacheEntry {
        var entry = codecEntry("activities:alice:ride,run:30", body: [0, 255] + marker + [7], namespace: "activities", user: "alice")
        entry.contentType = "application/x-MARKER-type"
        entry.etag = ETag.make(for: entry.body)
        return entry
    }

    @Test func aSealedEntryRoundTripsAndShowsNothingOfTheBody() throws {
        let codec = EntryCodec(keyRing: Self.ring("k1"), acceptPlaintext: false)
        let bytes = try codec.encode(entry)
        #expect(try codec.decode(bytes, key: entry.key) == entry)
        for secret in [marker, Array("MARKER-type".utf8), Array(entry.etag.utf8), Array(SHA256.hash(data: entry.body))] {
            #expect(!bytes.contains(subsequence: secret))
        }
        // Two writes of one entry differ (a fresh nonce each).
        #expect(try codec.encode(entry) != bytes)
        // The index reads the metadata without the key.
        let header = try EntryFormat.decodeHeader(bytes)
        // All but the body's length, which is not in the clear (§9.7): the header gives an upper bound.
        var metadata = header.metadata
        #expect(metadata.bytes >= entry.body.count)
        metadata.bytes = entry.body.count
        #expect(metadata == entry.metadata)
        #expect(header.fileSize == bytes.count)
        #expect(header.isSealed)
    }

    @Test func plaintextIsReadWithARingOnlyInAMigrationAndSealedNeedsOne() throws {
        let plain = EntryFormat.encode(entry)
        #expect(try EntryCodec(keyRing: Self.ring("k1"), acceptPlaintext: true).decode(plain, key: entry.key) == entry)
        #expect(throws: EntryFormatError.unsealed) {
            try EntryCodec(keyRing: Self.ring("k1"), acceptPlaintext: false).decode(plain, key: entry.key)
        }
        let sealed = try EntryCodec(keyRing: Self.ring("k1"), acceptPlaintext: false).encode(entry)
        #expect(throws: EntryFormatError.unknownKey("k1")) { try EntryCodec().decode(sealed, key: entry.key) }
        #expect(throws: EntryFormatError.unknownKey("k1")) { try EntryCodec(keyRing: Self.ring("k2"), acceptPlaintext: false).decode(sealed, key: entry.key) }
        #expect(try EntryCodec(keyRing: Self.ring("k2", "k1"), acceptPlaintext: false).decode(sealed, key: entry.key) == entry)
    }

    @Test func editedMovedOrForeignValuesDoNotOpen() throws {
        let codec = EntryCodec(keyRing: Self.ring("k1"), acceptPlaintext: false)
        let sealed = try codec.encode(entry)
        func failure(_ bytes: [UInt8], key: String? = nil, codec: EntryCodec? = nil) -> EntryFormatError? {
            do {
                _ = try (codec ?? EntryCodec(keyRing: Self.ring("k1"), acceptPlaintext: false)).decode(bytes, key: key ?? entry.key)
                return nil
            } catch { return error }
        }
        var flippedBody = sealed
        flippedBody[sealed.count - 20] ^= 0x01
        #expect(failure(flippedBody) == .notAuthentic)
        var flippedTag = sealed
        flippedTag[sealed.count - 1] ^= 0x80
        #expect(failure(flippedTag) == .notAuthentic)
        // Moved: another key's value under this name.
        var other = entry
        other.key = "activities:bob:ride,run:30"
        #expect(failure(try codec.encode(other)) == .notAuthentic)
        // Another fleet's ring with the same key ID.
        let foreign = EntryCodec(keyRing: try KeyRing(keys: [("k1", Array(repeating: 9, count: 32))]), acceptPlaintext: false)
        #expect(failure(sealed, codec: foreign) == .notAuthentic)
        // The clear header is covered by its digest and by the tag.
        var flippedHeader = sealed
        flippedHeader[SealedEntryFormat.fixedLength + 6] ^= 0x20
        #expect(failure(flippedHeader) == .headerChecksumMismatch)
        #expect(failure(Array(sealed.dropLast())) == .lengthMismatch)
        #expect(failure(flippedBody)?.isUndecryptable == true)
        #expect(failure(flippedHeader)?.isUndecryptable == false)
    }

    @Test func resealingMovesEverythingToThePrimary() throws {
        let old = EntryCodec(keyRing: Self.ring("k1"), acceptPlaintext: false)
        let rotated = EntryCodec(keyRing: Self.ring("k2", "k1"), acceptPlaintext: true)
        for stored in [EntryFormat.encode(entry), try old.encode(entry)] {
            let resealed = try #require(try rotated.resealed(stored, key: entry.key))
            #expect(KeyRing.keyID(of: resealed[try EntryFormat.decodeHeader(resealed).headerLength...]) == "k2")
            #expect(try EntryCodec(keyRing: Self.ring("k2"), acceptPlaintext: false).decode(resealed, key: entry.key) == entry)
            #expect(try rotated.resealed(resealed, key: entry.key) == nil)
        }
        let foreign = try EntryCodec(keyRing: Self.ring("x"), acceptPlaintext: false).encode(entry)
        #expect(throws: EntryFormatError.unknownKey("x")) { try rotated.resealed(foreign, key: entry.key) }
        // Outside a migration a plaintext value is not sealed: it fails to open, and counts as undecryptable.
        let strict = EntryCodec(keyRing: Self.ring("k2", "k1"), acceptPlaintext: false)
        #expect(throws: EntryFormatError.unsealed) { try strict.resealed(EntryFormat.encode(entry), key: entry.key) }
        #expect(EntryFormatError.unsealed.isUndecryptable)
    }
}

extension Array where Element == UInt8 {
    func contains(subsequence: [UInt8]) -> Bool {
        guard !subsequence.isEmpty, subsequence.count <= count else { return false }
        return (0...(count - subsequence.count)).contains { self[$0..<($0 + subsequence.count)].elementsEqual(subsequence) }
    }
}
