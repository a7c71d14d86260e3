import Foundation

/// The header fields every version of `EntryFormat` shares, read in their order.
extension ByteReader {
    /// What follows magic and version: kind, flags, header length, body length (in version 3, the sealed length:
    /// no body length is in the clear).
    mutating func entryPreamble() throws(EntryFormatError) -> (rawKind: UInt8, flags: UInt8, headerLength: Int, bodyLength: UInt64) {
        _ = take(6)
        let rawKind: UInt8 = try integer()
        let flags: UInt8 = try integer()
        let headerLength = Int(try integer() as UInt32)
        let bodyLength: UInt64 = try integer()
        return (rawKind, flags, headerLength, bodyLength)
    }

    /// Stored-at, expires-at and stale-until.
    mutating func entryTimes() throws(EntryFormatError) -> (storedAt: Date, expiresAt: Date, staleUntil: Date) {
        (try date(), try date(), try date())
    }

    /// Key, namespace and user (`nil` unless `flags` says the entry has one), into the metadata.
    mutating func entryMetadata(
        rawKind: UInt8, flags: UInt8, bodyLength: UInt64, times: (storedAt: Date, expiresAt: Date, staleUntil: Date)
    ) throws(EntryFormatError) -> CacheEntryMetadata {
        guard let kind = CacheEntry.Kind(rawValue: rawKind) else { throw .malformedHeader }
        let key = try string()
        let namespace = try string()
        let user = try string()
        return CacheEntryMetadata(
            key: key, namespace: namespace, user: flags & 1 == 0 ? nil : user, kind: kind, bytes: Int(bodyLength),
            storedAt: times.storedAt, expiresAt: times.expiresAt, staleUntil: times.staleUntil)
    }

    /// The rest of a sealed header (versions 2 and 3) once its preamble's lengths are checked: the header's digest,
    /// the times and strings, and nothing after them; `payload` says where the sealed part lies.
    mutating func sealedEntryHeader(
        _ bytes: [UInt8], rawKind: UInt8, flags: UInt8, headerLength: Int, bodyLength: UInt64,
        payload: EntryHeader.Payload
    ) throws(EntryFormatError) -> EntryHeader {
        try EntryFormat.verifyDigest(bytes, headerLength: headerLength)
        let times = try entryTimes()
        let metadata = try entryMetadata(rawKind: rawKind, flags: flags, bodyLength: bodyLength, times: times)
        guard offset == headerLength - EntryFormat.digestLength else { throw .malformedHeader }
        return EntryHeader(metadata: metadata, headerLength: headerLength, payload: payload)
    }
}
