import CDigest
import Crypto
import Foundation

/// The stored form of one entry (a disk file, a Redis value): a self-describing, checksummed header followed
/// by the body, in one piece, so data and metadata can never disagree. Integers little-endian:
///
/// Version 1, plaintext (written without a key ring):
///
///     magic "UCDT" (4) | format version u16 (1) | kind u8 | flags u8 (bit 0: has user)
///     header length u32 | body length u64
///     stored-at f64 | expires-at f64 | stale-until f64   (seconds since 2001-01-01, exact bit patterns)
///     SHA-256 of the body (32)
///     key, namespace, user, ETag, content type          (each: u32 length + UTF-8)
///     SHA-256 of every header byte before it (32)
///     body
///
/// Version 3, sealed (written with a key ring, CONTRACT §9; see `SealedEntryFormat`): the same header without the
/// body's length and digest, the ETag and the content type, then one AES-256-GCM envelope holding those and the
/// body, padded to a multiple of 64 bytes. Version 2 (sealed, with the body's length in the clear, unpadded) is
/// still read.
///
/// The shared tier stores its values in this format too (CONTRACT §6.2: the same verification as a disk file).
public enum EntryFormat {
    package static let magic: [UInt8] = Array("UCDT".utf8)
    package static let version: UInt16 = 1
    /// Bytes before the variable strings.
    package static let fixedLength = 4 + 2 + 1 + 1 + 4 + 8 + 3 * 8 + 32
    package static let digestLength = 32
    /// No valid header is longer (keys ≤ 512 bytes, the rest short); anything above is corrupt.
    package static let maxHeaderLength = 64 * 1024
    /// What the index rebuild reads first; almost every header fits.
    package static let typicalHeaderRead = 4096

    /// The complete plaintext (version 1) form of `entry`.
    public static func encode(_ entry: CacheEntry) -> [UInt8] {
        var strings = ByteWriter()
        strings.string(entry.key)
        strings.string(entry.namespace)
        strings.string(entry.user ?? "")
        strings.string(entry.etag)
        strings.string(entry.contentType)
        let headerLength = fixedLength + strings.bytes.count + digestLength

        var out = ByteWriter(capacity: headerLength + entry.body.count)
        out.bytes += magic
        out.integer(version)
        out.integer(entry.kind.rawValue)
        out.integer(UInt8(entry.user == nil ? 0 : 1))
        out.integer(UInt32(headerLength))
        out.integer(UInt64(entry.body.count))
        out.date(entry.storedAt)
        out.date(entry.expiresAt)
        out.date(entry.staleUntil)
        out.bytes += SHA256.hash(data: entry.body)
        out.bytes += strings.bytes
        out.bytes += SHA256.hash(data: out.bytes)
        out.bytes += entry.body
        return out.bytes
    }

    /// Parses and verifies the header at the start of `bytes`, of any version. Needs `header.headerLength`
    /// bytes: throws `.truncated(needed:)` with the length to read when `bytes` is shorter. `key`: the key the caller
    /// expects (read as that string, not a copy, when it is the one stored).
    package static func decodeHeader(_ bytes: [UInt8], key: String? = nil) throws(EntryFormatError) -> EntryHeader {
        guard bytes.count >= 6 else { throw .truncated(needed: fixedLength) }
        guard bytes[0..<4] == magic[...] else { throw .badMagic }
        let version = UInt16(bytes[4]) | UInt16(bytes[5]) << 8
        switch version {
        case Self.version: return try decodePlainHeader(bytes, key: key)
        case SealedEntryFormat.version: return try SealedEntryFormat.decodeHeader(bytes, key: key)
        case SealedEntryFormatVersion2.version: return try SealedEntryFormatVersion2.decodeHeader(bytes, key: key)
        default: throw .unsupportedVersion(version)
        }
    }

    /// Version 1's header.
    private static func decodePlainHeader(_ bytes: [UInt8], key: String?) throws(EntryFormatError) -> EntryHeader {
        guard bytes.count >= fixedLength else { throw .truncated(needed: fixedLength) }
        var reader = ByteReader(bytes, expecting: key)
        let (rawKind, flags, headerLength, bodyLength) = try reader.entryPreamble()
        guard headerLength >= fixedLength + 5 * 4 + digestLength, headerLength <= maxHeaderLength,
            bodyLength <= UInt64(Int.max - maxHeaderLength)
        else { throw .malformedHeader }
        try verifyDigest(bytes, headerLength: headerLength)
        let times = try reader.entryTimes()
        let bodyDigest = try reader.take(digestLength, orThrow: .malformedHeader)
        let metadata = try reader.entryMetadata(rawKind: rawKind, flags: flags, bodyLength: bodyLength, times: times)
        let etag = try reader.string()
        let contentType = try reader.string()
        guard reader.offset == headerLength - digestLength else { throw .malformedHeader }
        return EntryHeader(
            metadata: metadata, headerLength: headerLength,
            payload: .plain(etag: etag, contentType: contentType, bodyDigest: bodyDigest))
    }

    /// Checks the header's own digest (its last 32 bytes cover every byte before them).
    static func verifyDigest(_ bytes: [UInt8], headerLength: Int) throws(EntryFormatError) {
        guard bytes.count >= headerLength else { throw .truncated(needed: headerLength) }
        let checked = headerLength - digestLength
        guard digest(of: bytes[0..<checked], matches: bytes[checked..<headerLength]) else {
            throw .headerChecksumMismatch
        }
    }

    /// Parses and verifies a whole plaintext value stored for `key` (its length is the value's); a sealed one
    /// needs `EntryCodec`, which has the key ring.
    public static func decode(_ bytes: [UInt8], key: String) throws(EntryFormatError) -> CacheEntry {
        try EntryCodec().decode(bytes, key: key)
    }

    /// A version 1 value whose header is verified: checks the key, the length and the body's digest.
    static func decodePlain(
        _ bytes: [UInt8], header: EntryHeader, etag: String, contentType: String, bodyDigest: ArraySlice<UInt8>
    ) throws(EntryFormatError) -> CacheEntry {
        let body = Array(bytes[header.headerLength...])
        guard digest(of: body[...], matches: bodyDigest) else { throw .bodyChecksumMismatch }
        let m = header.metadata
        return CacheEntry(
            key: m.key, namespace: m.namespace, user: m.user, kind: m.kind, body: body,
            contentType: contentType, etag: etag, storedAt: m.storedAt, expiresAt: m.expiresAt, staleUntil: m.staleUntil)
    }

    /// Whether `stored` is the SHA-256 of `bytes`, hashed and compared in place: every read verifies. Hashed by
    /// GnuTLS's one-shot `gnutls_hash_fast` (nettle's SHA-256, on the CPU's SHA instructions on x86-64 and ARM64),
    /// which allocates nothing, where swift-crypto's hasher allocates its context and copies it to finish (the writes
    /// keep swift-crypto: the same digest). A hash that fails (SHA-256 does not) reads as a mismatch: the value is not
    /// served.
    static func digest(of bytes: ArraySlice<UInt8>, matches stored: ArraySlice<UInt8>) -> Bool {
        guard stored.count == digestLength else { return false }
        return withUnsafeTemporaryAllocation(byteCount: digestLength, alignment: 8) { computed in
            let hashed = bytes.withUnsafeBytes {
                gnutls_hash_fast(GNUTLS_DIG_SHA256, $0.baseAddress, $0.count, computed.baseAddress)
            }
            // Force unwraps: both buffers hold 32 bytes, so both have a base address.
            return hashed == 0
                && stored.withUnsafeBytes { memcmp(computed.baseAddress!, $0.baseAddress!, digestLength) == 0 }
        }
    }
}
