import Crypto
import Foundation

/// The on-disk form of one entry: a self-describing, checksummed header followed by the body,
/// in one file, so data and metadata can never disagree.
///
/// Layout (integers little-endian):
///
///     magic "UCDT" (4) | format version u16 | kind u8 | flags u8 (bit 0: has user)
///     header length u32 | body length u64
///     stored-at f64 | expires-at f64 | stale-until f64   (seconds since 2001-01-01, exact bit patterns)
///     SHA-256 of the body (32)
///     key, namespace, user, ETag, content type          (each: u32 length + UTF-8)
///     SHA-256 of every header byte before it (32)
///     body
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

    /// The complete file for `entry`.
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

    /// Parses and verifies the header at the start of `bytes`. Needs `header.headerLength` bytes:
    /// throws `.truncated(needed:)` with the length to read when `bytes` is shorter.
    package static func decodeHeader(_ bytes: [UInt8]) throws(EntryFormatError) -> EntryHeader {
        var reader = ByteReader(bytes)
        guard bytes.count >= fixedLength else { throw .truncated(needed: fixedLength) }
        guard reader.take(4) == magic[...] else { throw .badMagic }
        let version: UInt16 = try reader.integer()
        guard version == Self.version else { throw .unsupportedVersion(version) }
        let rawKind: UInt8 = try reader.integer()
        let flags: UInt8 = try reader.integer()
        let headerLength = Int(try reader.integer() as UInt32)
        let bodyLength64: UInt64 = try reader.integer()
        guard headerLength >= fixedLength + 5 * 4 + digestLength, headerLength <= maxHeaderLength,
            bodyLength64 <= UInt64(Int.max - maxHeaderLength)
        else { throw .malformedHeader }
        guard bytes.count >= headerLength else { throw .truncated(needed: headerLength) }
        let checked = headerLength - digestLength
        guard SHA256.hash(data: bytes[0..<checked]).elementsEqual(bytes[checked..<headerLength]) else {
            throw .headerChecksumMismatch
        }
        guard let kind = CacheEntry.Kind(rawValue: rawKind) else { throw .malformedHeader }
        let storedAt = try reader.date()
        let expiresAt = try reader.date()
        let staleUntil = try reader.date()
        let bodyDigest = Array(try reader.take(digestLength, orThrow: .malformedHeader))
        let key = try reader.string()
        let namespace = try reader.string()
        let user = try reader.string()
        let etag = try reader.string()
        let contentType = try reader.string()
        guard reader.offset == checked else { throw .malformedHeader }
        let bodyLength = Int(bodyLength64)
        let metadata = CacheEntryMetadata(
            key: key, namespace: namespace, user: flags & 1 == 0 ? nil : user, kind: kind, bytes: bodyLength,
            storedAt: storedAt, expiresAt: expiresAt, staleUntil: staleUntil)
        return EntryHeader(
            metadata: metadata, etag: etag, contentType: contentType, headerLength: headerLength,
            bodyDigest: bodyDigest)
    }

    /// Parses and verifies a whole value stored for `key` (its length is the value's).
    public static func decode(_ bytes: [UInt8], key: String) throws(EntryFormatError) -> CacheEntry {
        try decode(bytes, fileSize: bytes.count, key: key)
    }

    /// Parses and verifies a whole file read for `key`.
    package static func decode(_ bytes: [UInt8], fileSize: Int, key: String) throws(EntryFormatError) -> CacheEntry {
        let header = try decodeHeader(bytes)
        guard header.metadata.key == key else { throw .keyMismatch }
        guard fileSize == header.fileSize, bytes.count == header.fileSize else { throw .lengthMismatch }
        let body = Array(bytes[header.headerLength...])
        guard SHA256.hash(data: body).elementsEqual(header.bodyDigest) else { throw .bodyChecksumMismatch }
        let m = header.metadata
        return CacheEntry(
            key: m.key, namespace: m.namespace, user: m.user, kind: m.kind, body: body,
            contentType: header.contentType, etag: header.etag,
            storedAt: m.storedAt, expiresAt: m.expiresAt, staleUntil: m.staleUntil)
    }
}
