import Crypto
import Foundation
import Testing

@testable import UnifiedCache

@Suite(.timeLimit(.minutes(10))) struct EntryFormatTests {
    let entry = codecEntry("activities:alice:ride,run:30", body: Array(0..<200), namespace: "activities", user: "alice")

    @Test func roundTripsEveryField() throws {
        let bytes = EntryFormat.encode(entry)
        let decoded = try EntryCodec().decode(bytes, fileSize: bytes.count, key: entry.key).entry
        #expect(decoded == entry)
        let header = try EntryFormat.decodeHeader(Array(bytes.prefix(bytes.count - entry.body.count)))
        #expect(header.metadata == entry.metadata)
        #expect(header.fileSize == bytes.count)
    }

    /// The read's digest check (GnuTLS) is the writer's SHA-256 (swift-crypto) at every length around SHA-256's
    /// 64-byte blocks and its 56-byte padding bound, none included; a digest one bit off, or short, does not match.
    @Test(arguments: [0, 1, 55, 56, 63, 64, 65, 119, 120, 1000, 65_536])
    func theReadsDigestCheckIsTheWritersSHA256(length: Int) {
        let bytes = (0..<length).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
        let written = Array(SHA256.hash(data: bytes))
        #expect(EntryFormat.digest(of: bytes[...], matches: written[...]))
        var flipped = written
        flipped[length % 32] ^= 0x01
        #expect(!EntryFormat.digest(of: bytes[...], matches: flipped[...]))
        #expect(!EntryFormat.digest(of: bytes[...], matches: written.dropLast()))
    }

    /// The key a reader expects is taken for the stored one only when it is the stored one, byte for byte: a key one
    /// byte shorter, longer or different is read as stored (and the codec refuses it as another key's value).
    @Test func anExpectedKeyIsReadOnlyWhenItIsTheStoredOne() throws {
        let bytes = EntryFormat.encode(entry)
        for expected in [entry.key, String(entry.key.dropLast()), entry.key + "x", "activities:alice:ride,run:31", ""] {
            #expect(try EntryFormat.decodeHeader(bytes, key: expected).metadata == entry.metadata)
        }
        #expect(throws: EntryFormatError.keyMismatch) {
            try EntryCodec().decode(bytes, fileSize: bytes.count, key: "activities:alice:ride,run:31")
        }
        var other = entry
        other.contentType = "application/jsonx"
        let otherBytes = EntryFormat.encode(other)
        #expect(try EntryCodec().decode(otherBytes, fileSize: otherBytes.count, key: other.key).entry == other)
    }

    @Test func keepsAbsentUserApartFromEmptyUser() throws {
        var withEmpty = entry
        withEmpty.user = ""
        var withNone = entry
        withNone.user = nil
        for value in [withEmpty, withNone] {
            let bytes = EntryFormat.encode(value)
            #expect(try EntryCodec().decode(bytes, fileSize: bytes.count, key: value.key).entry.user == value.user)
        }
    }

    @Test func rejectsEveryKindOfDamage() {
        let good = EntryFormat.encode(entry)
        func decode(_ bytes: [UInt8], key: String? = nil) -> EntryFormatError? {
            do {
                _ = try EntryCodec().decode(bytes, fileSize: bytes.count, key: key ?? entry.key)
                return nil
            } catch { return error }
        }
        #expect(decode(good) == nil)
        #expect(decode(Array(good.dropLast())) == .lengthMismatch)
        #expect(decode(good + [0]) == .lengthMismatch)
        #expect(decode(Array(good.prefix(10))) == .truncated(needed: EntryFormat.fixedLength))
        var flippedBody = good
        flippedBody[good.count - 7] ^= 0x01
        #expect(decode(flippedBody) == .bodyChecksumMismatch)
        var flippedHeader = good
        flippedHeader[EntryFormat.fixedLength + 6] ^= 0x20  // inside the key
        #expect(decode(flippedHeader) == .headerChecksumMismatch)
        var zeroed = good
        for i in 0..<EntryFormat.fixedLength { zeroed[i] = 0 }
        #expect(decode(zeroed) == .badMagic)
        var future = good
        future[4] = 4
        #expect(decode(future) == .unsupportedVersion(4))
        #expect(decode(good, key: "another:key") == .keyMismatch)
    }

    /// A header whose digest verifies but whose strings are not UTF-8 (an older or foreign writer) is malformed, not
    /// read with its bytes repaired: every byte of the namespace and the ETag is tried as 0xFF, 0xC3 (a lead byte cut
    /// short) and 0x80 (a lone continuation).
    @Test(arguments: [UInt8(0xFF), 0xC3, 0x80]) func rejectsStringsThatAreNotUTF8(byte: UInt8) {
        let good = EntryFormat.encode(entry)
        let headerLength = good.count - entry.body.count
        let strings = EntryFormat.fixedLength..<(headerLength - EntryFormat.digestLength)
        let namespace = Array("activities".utf8)
        // Force unwrap: the namespace is in the header the entry was encoded into.
        let at = good[strings].firstRange(of: namespace)!.lowerBound
        for offset in 0..<namespace.count {
            var bad = good
            bad[at + offset] = byte
            let digest = SHA256.hash(data: bad[0..<strings.upperBound])
            bad.replaceSubrange(strings.upperBound..<headerLength, with: Array(digest))
            #expect(throws: EntryFormatError.malformedHeader) {
                _ = try EntryCodec().decode(bad, fileSize: bad.count, key: entry.key)
            }
        }
    }
}
