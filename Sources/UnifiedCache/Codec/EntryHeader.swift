/// A verified header: everything about an entry except its body.
package struct EntryHeader: Sendable, Equatable {
    package var metadata: CacheEntryMetadata
    package var etag: String
    package var contentType: String
    package var headerLength: Int
    package var bodyDigest: [UInt8]

    package var fileSize: Int { headerLength + metadata.bytes }
}

/// Why a file is not a valid entry. Every case means: delete it, count it, treat as a miss.
public enum EntryFormatError: Error, Sendable, Equatable {
    case badMagic
    case unsupportedVersion(UInt16)
    /// Fewer bytes than the header needs; `needed` is how many to read to decide.
    case truncated(needed: Int)
    case malformedHeader
    case headerChecksumMismatch
    /// The file holds another key (a hash collision or a misplaced file).
    case keyMismatch
    /// The file is shorter or longer than header + body.
    case lengthMismatch
    case bodyChecksumMismatch
}
