import Sealing

/// How a tier below memory turns entries into stored bytes and back: sealed under the key ring's primary when
/// there is a ring (CONTRACT §9), plaintext as before without one. A sealed value opens with any key of the ring.
///
/// Whether a plaintext value is read is an explicit policy: without a ring always; with one only during a
/// migration (`--encryption-migrate`), because a plaintext value needs no secret to forge (CONTRACT §9.2). A
/// refused one fails to open like a value sealed under an unknown key: deleted, counted undecryptable, a miss.
public struct EntryCodec: Sendable {
    public let keyRing: KeyRing?
    /// Whether plaintext (version 1) values are read; always `true` without a key ring.
    package let acceptsPlaintext: Bool

    /// Without a key ring: plaintext written and read, a sealed value undecryptable.
    public init() {
        self.init(keyRing: nil, acceptPlaintext: true)
    }

    /// With `keyRing`, sealed writes, and plaintext read only when `acceptPlaintext` (a migration); without one,
    /// plaintext whatever `acceptPlaintext` says.
    public init(keyRing: KeyRing?, acceptPlaintext: Bool) {
        self.keyRing = keyRing
        self.acceptsPlaintext = keyRing == nil || acceptPlaintext
    }

    /// The primary key's ID, `nil` without a ring.
    public var primaryKeyID: String? { keyRing?.primary.id }

    /// The stored form of `entry`.
    public func encode(_ entry: CacheEntry) throws(SealingError) -> [UInt8] {
        guard let keyRing else { return EntryFormat.encode(entry) }
        return try SealedEntryFormat.encode(entry, ring: keyRing)
    }

    /// Parses, verifies and (when sealed) opens a whole value stored for `key` (its length is the value's).
    public func decode(_ bytes: [UInt8], key: String) throws(EntryFormatError) -> CacheEntry {
        try decode(bytes, fileSize: bytes.count, key: key).entry
    }

    /// The same for a file read for `key`, whose size on disk is `fileSize`; also tells the entry's key ID
    /// (`nil`: plaintext).
    package func decode(
        _ bytes: [UInt8], fileSize: Int, key: String
    ) throws(EntryFormatError) -> (entry: CacheEntry, keyID: String?) {
        let header = try EntryFormat.decodeHeader(bytes, key: key)
        guard header.isSealed || acceptsPlaintext else { throw .unsealed }
        // A sealed value's key is authenticated too: one that names another key was moved here.
        guard header.metadata.key == key else { throw header.isSealed ? .notAuthentic : .keyMismatch }
        guard fileSize == header.fileSize, bytes.count == header.fileSize else { throw .lengthMismatch }
        switch header.payload {
        case .plain(let etag, let contentType, let bodyDigest):
            let entry = try EntryFormat.decodePlain(
                bytes, header: header, etag: etag, contentType: contentType, bodyDigest: bodyDigest)
            return (entry, nil)
        case .sealed:
            let entry = try SealedEntryFormat.open(bytes, header: header, ring: keyRing)
            return (entry, KeyRing.keyID(of: bytes[header.headerLength...]))
        }
    }

    /// For a rekey: `nil` when `bytes` (stored for `key`) is already sealed under the primary (or, without a
    /// ring, is a valid value), else the same entry sealed under the primary. Throws when it does not verify or
    /// open (a plaintext value outside a migration does not); `isUndecryptable` tells which.
    public func resealed(_ bytes: [UInt8], key: String) throws(EntryFormatError) -> [UInt8]? {
        let (entry, keyID) = try decode(bytes, fileSize: bytes.count, key: key)
        guard let keyRing, keyID != keyRing.primary.id else { return nil }
        // AES-GCM refuses to seal only with a key of another size, which the ring excludes: left as it is then.
        do { return try encode(entry) } catch { return nil }
    }
}
