import Crypto
import Foundation
import Sealing

/// Version 2 of `EntryFormat`: an entry sealed with AES-256-GCM under the key ring's primary (CONTRACT §9).
///
///     magic "UCDT" (4) | format version u16 (2) | kind u8 | flags u8 (bit 0: has user)
///     header length u32 | body length u64 | sealed length u64
///     stored-at f64 | expires-at f64 | stale-until f64
///     key, namespace, user                               (each: u32 length + UTF-8)
///     SHA-256 of every header byte before it (32)
///     sealed: KeyRing envelope (format, key ID, nonce, ciphertext, tag) of
///             ETag, content type (u32 length + UTF-8 each) | body
///
/// What stays readable is what the disk index and the listings need (key, namespace, user, kind, times,
/// lengths); the whole header, digest included, is the envelope's authenticated context, so it cannot be edited
/// and the value cannot be moved to another key. No digest of the body is in the clear (it would confirm a
/// guessed body): the GCM tag authenticates the body.
enum SealedEntryFormat {
    static let version: UInt16 = 2
    /// Bytes before the variable strings.
    static let fixedLength = 4 + 2 + 1 + 1 + 4 + 8 + 8 + 3 * 8
    static let digestLength = EntryFormat.digestLength

    static func encode(_ entry: CacheEntry, ring: KeyRing) throws(SealingError) -> [UInt8] {
        var strings = ByteWriter()
        strings.string(entry.key)
        strings.string(entry.namespace)
        strings.string(entry.user ?? "")
        var secret = ByteWriter(capacity: 8 + entry.etag.utf8.count + entry.contentType.utf8.count + entry.body.count)
        secret.string(entry.etag)
        secret.string(entry.contentType)
        secret.bytes += entry.body
        let headerLength = fixedLength + strings.bytes.count + digestLength
        let sealedLength = secret.bytes.count + ring.overhead

        var out = ByteWriter(capacity: headerLength + sealedLength)
        out.bytes += EntryFormat.magic
        out.integer(version)
        out.integer(entry.kind.rawValue)
        out.integer(UInt8(entry.user == nil ? 0 : 1))
        out.integer(UInt32(headerLength))
        out.integer(UInt64(entry.body.count))
        out.integer(UInt64(sealedLength))
        out.date(entry.storedAt)
        out.date(entry.expiresAt)
        out.date(entry.staleUntil)
        out.bytes += strings.bytes
        out.bytes += SHA256.hash(data: out.bytes)
        out.bytes += try ring.seal(secret.bytes, authenticating: out.bytes)
        return out.bytes
    }

    static func decodeHeader(_ bytes: [UInt8]) throws(EntryFormatError) -> EntryHeader {
        guard bytes.count >= fixedLength else { throw .truncated(needed: fixedLength) }
        var reader = ByteReader(bytes)
        let (rawKind, flags, headerLength, bodyLength) = try reader.entryPreamble()
        let sealedLength: UInt64 = try reader.integer()
        let limit = UInt64(Int.max - EntryFormat.maxHeaderLength)
        guard headerLength >= fixedLength + 3 * 4 + digestLength, headerLength <= EntryFormat.maxHeaderLength,
            bodyLength <= limit, sealedLength <= limit, sealedLength > bodyLength
        else { throw .malformedHeader }
        try EntryFormat.verifyDigest(bytes, headerLength: headerLength)
        let times = try reader.entryTimes()
        let metadata = try reader.entryMetadata(rawKind: rawKind, flags: flags, bodyLength: bodyLength, times: times)
        guard reader.offset == headerLength - digestLength else { throw .malformedHeader }
        return EntryHeader(metadata: metadata, headerLength: headerLength, payload: .sealed(length: Int(sealedLength)))
    }

    /// Opens a sealed value whose header is verified and whose key and length were checked.
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
        var reader = ByteReader(secret)
        let etag = try reader.string()
        let contentType = try reader.string()
        let m = header.metadata
        guard secret.count - reader.offset == m.bytes else { throw .lengthMismatch }
        return CacheEntry(
            key: m.key, namespace: m.namespace, user: m.user, kind: m.kind, body: Array(secret[reader.offset...]),
            contentType: contentType, etag: etag, storedAt: m.storedAt, expiresAt: m.expiresAt, staleUntil: m.staleUntil)
    }
}
