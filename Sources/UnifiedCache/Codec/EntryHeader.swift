/// A verified header: everything about an entry a listing or an index needs, without its body.
package struct EntryHeader: Sendable, Equatable {
    package enum Payload: Sendable, Equatable {
        /// Version 1: the body follows in the clear; `bodyDigest` lies in the bytes the header was read from (a slice of
        /// them, not a copy: every read checks it).
        case plain(etag: String, contentType: String, bodyDigest: ArraySlice<UInt8>)
        /// Versions 2 and 3: one sealed envelope of `length` bytes follows (ETag, content type and body inside; in
        /// version 3, `padded`, the body's length too and zero bytes to a multiple of 64).
        case sealed(length: Int, padded: Bool)
    }

    package var metadata: CacheEntryMetadata
    package var headerLength: Int
    package var payload: Payload

    /// The header and what follows it.
    package var fileSize: Int {
        switch payload {
        case .plain: headerLength + metadata.bytes
        case .sealed(let length, _): headerLength + length
        }
    }

    package var isSealed: Bool {
        if case .sealed = payload { return true }
        return false
    }
}

/// Why stored bytes are not a valid entry here. Every case means: delete it, count it, treat as a miss.
public enum EntryFormatError: Error, Sendable, Equatable {
    case badMagic
    case unsupportedVersion(UInt16)
    /// Fewer bytes than the header needs; `needed` is how many to read to decide.
    case truncated(needed: Int)
    case malformedHeader
    case headerChecksumMismatch
    /// A plaintext value holds another key (a hash collision or a misplaced file).
    case keyMismatch
    /// The value is shorter or longer than header + body.
    case lengthMismatch
    case bodyChecksumMismatch
    /// Sealed under a key that is not in the key ring (removed from it, another fleet's, or no ring at all).
    case unknownKey(String)
    /// Sealed, and does not open here: edited, or moved from another file or Redis key.
    case notAuthentic
    /// A plaintext value where a key ring is configured and no migration allows it (CONTRACT §9.2): it needs no
    /// secret to forge, so it fails to open.
    case unsealed

    /// A sealed value that does not open (`disk.undecryptable`, `shared.undecryptable`), as opposed to damage.
    public var isUndecryptable: Bool {
        switch self {
        case .unknownKey, .notAuthentic, .unsealed: true
        default: false
        }
    }
}
