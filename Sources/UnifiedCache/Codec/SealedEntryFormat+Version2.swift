/// Version 2 of `EntryFormat`, sealed without padding: still read (it is authentic), never written since version 3.
///
///     magic "UCDT" (4) | format version u16 (2) | kind u8 | flags u8 (bit 0: has user)
///     header length u32 | body length u64 | sealed length u64
///     stored-at f64 | expires-at f64 | stale-until f64
///     key, namespace, user                               (each: u32 length + UTF-8)
///     SHA-256 of every header byte before it (32)
///     sealed: KeyRing envelope of ETag, content type (u32 length + UTF-8 each) | body
///
/// It gives the body's exact length in the clear, which CONTRACT §9.7 no longer allows for new values.
enum SealedEntryFormatVersion2 {
    static let version: UInt16 = 2
    /// Bytes before the variable strings.
    static let fixedLength = 4 + 2 + 1 + 1 + 4 + 8 + 8 + 3 * 8
    static let digestLength = EntryFormat.digestLength

    static func decodeHeader(_ bytes: [UInt8], key: String?) throws(EntryFormatError) -> EntryHeader {
        guard bytes.count >= fixedLength else { throw .truncated(needed: fixedLength) }
        var reader = ByteReader(bytes, expecting: key)
        let (rawKind, flags, headerLength, bodyLength) = try reader.entryPreamble()
        let sealedLength: UInt64 = try reader.integer()
        let limit = UInt64(Int.max - EntryFormat.maxHeaderLength)
        guard headerLength >= fixedLength + 3 * 4 + digestLength, headerLength <= EntryFormat.maxHeaderLength,
            bodyLength <= limit, sealedLength <= limit, sealedLength > bodyLength
        else { throw .malformedHeader }
        return try reader.sealedEntryHeader(
            bytes, rawKind: rawKind, flags: flags, headerLength: headerLength, bodyLength: bodyLength,
            payload: .sealed(length: Int(sealedLength), padded: false))
    }
}
