import Crypto
import Foundation
import Sealing

/// The sealed versions of `EntryFormat` (CONTRACT §9): an entry sealed with AES-256-GCM under the key ring's
/// primary. Version 3 is written; version 2 (which gave the body's length in the clear) is still read
/// (`SealedEntryFormat+Version2`).
///
/// Version 3, integers little-endian:
///
///     magic "UCDT" (4) | format version u16 (3) | kind u8 | flags u8 (bit 0: has user)
///     header length u32 | sealed length u64
///     stored-at f64 | expires-at f64 | stale-until f64
///     key, namespace, user                               (each: u32 length + UTF-8)
///     SHA-256 of every header byte before it (32)
///     sealed: KeyRing envelope (format, key ID, nonce, ciphertext, tag) of
///             body length u64 | ETag, content type (u32 length + UTF-8 each) | body | zero bytes
///
/// What stays readable is what the disk index and the listings need (key, namespace, user, kind, times); the whole
/// header, digest included, is the envelope's authenticated context, so it cannot be edited and the value cannot be
/// moved to another key. No digest of the body is in the clear (it would confirm a guessed body): the GCM tag
/// authenticates the body. Nor is its length (§9.7): it is inside, and the zero bytes pad the sealed plaintext to a
/// multiple of 64 bytes, so the value's size tells the body's length only to the next multiple of 64. A header read
/// alone reports the sealed length as the entry's `bytes` (an upper bound of the body's); opening it tells the rest.
enum SealedEntryFormat {
    static let version: UInt16 = 3
    /// Bytes before the variable strings.
    static let fixedLength = 4 + 2 + 1 + 1 + 4 + 8 + 3 * 8
    static let digestLength = EntryFormat.digestLength
    /// The sealed plaintext is a multiple of this many bytes.
    static let padding = 64

    /// The sealed plaintext's length for these parts: length, strings and body, rounded up to `padding`.
    static func paddedLength(etag: String, contentType: String, body: Int) -> Int {
        let exact = 8 + 4 + etag.utf8.count + 4 + contentType.utf8.count + body
        return (exact + padding - 1) / padding * padding
    }

    static func encode(_ entry: CacheEntry, ring: KeyRing) throws(SealingError) -> [UInt8] {
        var strings = ByteWriter()
        strings.string(entry.key)
        strings.string(entry.namespace)
        strings.string(entry.user ?? "")
        let padded = paddedLength(etag: entry.etag, contentType: entry.contentType, body: entry.body.count)
        var secret = ByteWriter(capacity: padded)
        secret.integer(UInt64(entry.body.count))
        secret.string(entry.etag)
        secret.string(entry.contentType)
        secret.bytes += entry.body
        secret.bytes += repeatElement(0, count: padded - secret.bytes.count)
        let headerLength = fixedLength + strings.bytes.count + digestLength
        let sealedLength = padded + ring.overhead

        var out = ByteWriter(capacity: headerLength + sealedLength)
        out.bytes += EntryFormat.magic
        out.integer(version)
        out.integer(entry.kind.rawValue)
        out.integer(UInt8(entry.user == nil ? 0 : 1))
        out.integer(UInt32(headerLength))
        out.integer(UInt64(sealedLength))
        out.date(entry.storedAt)
        out.date(entry.expiresAt)
        out.date(entry.staleUntil)
        out.bytes += strings.bytes
        out.bytes += SHA256.hash(data: out.bytes)
        out.bytes += try ring.seal(secret.bytes, authenticating: out.bytes)
        return out.bytes
    }

    static func decodeHeader(_ bytes: [UInt8], key: String?) throws(EntryFormatError) -> EntryHeader {
        guard bytes.count >= fixedLength else { throw .truncated(needed: fixedLength) }
        var reader = ByteReader(bytes, expecting: key)
        // The preamble's length field is the sealed length here: no clear body length.
        let (rawKind, flags, headerLength, sealedLength) = try reader.entryPreamble()
        guard headerLength >= fixedLength + 3 * 4 + digestLength, headerLength <= EntryFormat.maxHeaderLength,
            sealedLength <= UInt64(Int.max - EntryFormat.maxHeaderLength), sealedLength >= UInt64(padding)
        else { throw .malformedHeader }
        return try reader.sealedEntryHeader(
            bytes, rawKind: rawKind, flags: flags, headerLength: headerLength, bodyLength: sealedLength,
            payload: .sealed(length: Int(sealedLength), padded: true))
    }

    /// Opens a sealed value (either version) whose header is verified and whose key and length were checked.
    static func open(_ bytes: [UInt8], header: EntryHeader, ring: KeyRing?) throws(EntryFormatError) -> CacheEntry {
        let envelope = bytes[header.headerLength...]
        guard let ring else { throw .unknownKey(KeyRing.keyID(of: envelope) ?? "?") }
        let secret: [UInt8]
        do {
            secret = try ring.open(envelope, authenticating: Array(bytes[0..<header.headerLength]))
        } catch {
            switch error {
            case .unknownKey(let id): throw .unknownKey(id)
            case .malformed, .notAuthentic, .sealFailed: throw .notAuthentic
            }
        }
        guard case .sealed(_, let padded) = header.payload else { throw .malformedHeader }
        var reader = ByteReader(secret)
        let bodyLength = padded ? Int(clamping: try reader.integer() as UInt64) : header.metadata.bytes
        let etag = try reader.string()
        let contentType = try reader.string()
        let rest = secret.count - reader.offset
        // Version 3: the body, then fewer zero bytes than a padding step; version 2: the body alone.
        guard bodyLength <= rest, padded ? secret.count % padding == 0 && rest - bodyLength < padding : rest == bodyLength
        else { throw .lengthMismatch }
        let m = header.metadata
        return CacheEntry(
            key: m.key, namespace: m.namespace, user: m.user, kind: m.kind,
            body: Array(secret[reader.offset..<(reader.offset + bodyLength)]), contentType: contentType, etag: etag,
            storedAt: m.storedAt, expiresAt: m.expiresAt, staleUntil: m.staleUntil)
    }
}
