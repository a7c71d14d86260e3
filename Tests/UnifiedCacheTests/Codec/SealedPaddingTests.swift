import Crypto
import Foundation
import Sealing
import Testing

@testable import UnifiedCache

/// CONTRACT §9.7: nothing in the clear part of a sealed value gives the body's length, and the sealed body is
/// padded so that the value's size tells that length only to the next multiple of 64 bytes. Values sealed before
/// (version 2, with the length in the clear) still open.
@Suite(.timeLimit(.minutes(10))) struct SealedPaddingTests {
    let codec = EntryCodec(keyRing: SealedEntryFormatTests.ring("k1"), acceptPlaintext: false)

    func entry(_ body: String) -> CacheEntry {
        entry(Array(body.utf8))
    }

    func entry(_ body: [UInt8]) -> CacheEntry {
        var entry = codecEntry("health.metrics:alice:answered", body: body, namespace: "health.metrics", user: "alice")
        entry.contentType = "application/json"
        entry.etag = "\"fixed-etag\""
        return entry
    }

    @Test func trueAndFalseSealToTheSameSize() throws {
        let yes = try codec.encode(entry(#"{"answered":true}"#))
        let no = try codec.encode(entry(#"{"answered":false}"#))
        #expect(yes.count == no.count)
        #expect(try codec.decode(yes, key: entry("").key).body == Array(#"{"answered":true}"#.utf8))
        #expect(try codec.decode(no, key: entry("").key).body == Array(#"{"answered":false}"#.utf8))
    }

    @Test func sizesStepBy64AndEveryLengthRoundTrips() throws {
        let empty = try codec.encode(entry([])).count
        var sizes: Set<Int> = []
        for length in 0..<300 {
            let value = entry(Array(repeating: UInt8(truncatingIfNeeded: length), count: length))
            let bytes = try codec.encode(value)
            #expect((bytes.count - empty) % 64 == 0, "\(length)")
            #expect(try codec.decode(bytes, key: value.key) == value)
            sizes.insert(bytes.count)
        }
        // 300 lengths (plus 8 + 2 × 4 + strings of 28 bytes) fill 6 steps of 64.
        #expect(sizes.count == 6)
    }

    @Test func theClearHeaderHoldsNoBodyLength() throws {
        for length in [17, 18, 1000, 4097] {
            let value = entry(Array(repeating: 0x61, count: length))
            let bytes = try codec.encode(value)
            let header = try EntryFormat.decodeHeader(bytes)
            let clear = Array(bytes[0..<header.headerLength])
            #expect(bytes[4] == 3 && bytes[5] == 0, "written as version 3")
            // The length field after the header length is the sealed part's, a multiple of 64 plus the envelope.
            let field = clear[12..<20].enumerated().reduce(0) { $0 | Int($1.element) << (8 * $1.offset) }
            #expect(field == bytes.count - header.headerLength)
            #expect(field != length)
            for encoding in [withUnsafeBytes(of: UInt64(length).littleEndian, Array.init), withUnsafeBytes(of: UInt32(length).littleEndian, Array.init)] {
                #expect(!clear.contains(subsequence: encoding), "\(length) in the clear header")
            }
            // A header read alone reports the sealed length, an upper bound of the body's.
            #expect(header.metadata.bytes == field)
            #expect(header.metadata.bytes >= length)
        }
    }

    @Test func version2ValuesStillOpen() throws {
        let ring = SealedEntryFormatTests.ring("k1")
        let value = entry(#"{"answered":true}"#)
        let bytes = try Self.version2(value, ring: ring)
        #expect(try codec.decode(bytes, key: value.key) == value)
        let header = try EntryFormat.decodeHeader(bytes)
        #expect(header.metadata == value.metadata)
        #expect(header.fileSize == bytes.count)
        // Edited, it does not open.
        var edited = bytes
        edited[edited.count - 20] ^= 1
        #expect(throws: EntryFormatError.notAuthentic) { try codec.decode(edited, key: value.key) }
        // A rekey rewrites it as version 3.
        let rotated = EntryCodec(keyRing: SealedEntryFormatTests.ring("k2", "k1"), acceptPlaintext: false)
        let resealed = try #require(try rotated.resealed(bytes, key: value.key))
        #expect(resealed[4] == 3)
        #expect(try rotated.decode(resealed, key: value.key) == value)
    }

    /// `value` as the previous release sealed it (version 2, the body's length in the clear, no padding).
    static func version2(_ value: CacheEntry, ring: KeyRing) throws -> [UInt8] {
        func integer<T: FixedWidthInteger>(_ v: T) -> [UInt8] { withUnsafeBytes(of: v.littleEndian, Array.init) }
        func string(_ s: String) -> [UInt8] { integer(UInt32(s.utf8.count)) + Array(s.utf8) }
        func date(_ d: Date) -> [UInt8] { integer(d.timeIntervalSinceReferenceDate.bitPattern) }
        let strings = string(value.key) + string(value.namespace) + string(value.user ?? "")
        let secret = string(value.etag) + string(value.contentType) + value.body
        let headerLength = 52 + strings.count + 32
        var header = Array("UCDT".utf8) + integer(UInt16(2)) + [value.kind.rawValue, value.user == nil ? 0 : 1]
        header += integer(UInt32(headerLength)) + integer(UInt64(value.body.count))
        header += integer(UInt64(secret.count + ring.overhead))
        header += date(value.storedAt) + date(value.expiresAt) + date(value.staleUntil) + strings
        header += Array(SHA256.hash(data: header))
        return header + (try ring.seal(secret, authenticating: header))
    }
}
