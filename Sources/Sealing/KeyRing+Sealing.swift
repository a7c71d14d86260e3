import Crypto

/// AES-256-GCM with a fresh random 96-bit nonce per value, in a Tink-like envelope that names its key:
///
///     format u8 (1) | key ID length u8 | key ID (ASCII) | nonce (12) | ciphertext | tag (16)
///
/// The GCM tag authenticates the ciphertext, the envelope's prefix (format and key ID) and the caller's
/// `context` (what binds the value to its place: the cache key and the entry's metadata), so a value that is
/// edited, moved elsewhere or relabelled with another key ID does not open.
extension KeyRing {
    package static let envelopeFormat: UInt8 = 1
    package static let nonceLength = 12
    package static let tagLength = 16

    /// Bytes an envelope sealed under the primary adds to its plaintext.
    public var overhead: Int { 2 + primary.idBytes.count + Self.nonceLength + Self.tagLength }

    /// Seals `plaintext` under the primary key, authenticating `context` with it.
    public func seal(_ plaintext: [UInt8], authenticating context: [UInt8]) throws(SealingError) -> [UInt8] {
        let key = primary
        var envelope: [UInt8] = []
        envelope.reserveCapacity(plaintext.count + overhead)
        envelope.append(Self.envelopeFormat)
        envelope.append(UInt8(key.idBytes.count))
        envelope += key.idBytes
        let box: AES.GCM.SealedBox
        do {
            box = try AES.GCM.seal(
                plaintext, using: key.secret, nonce: AES.GCM.Nonce(), authenticating: envelope + context)
        } catch {
            throw .sealFailed
        }
        box.nonce.withUnsafeBytes { envelope += $0 }
        envelope += box.ciphertext
        envelope += box.tag
        return envelope
    }

    /// Opens an envelope `seal` made, with the key its ID names and the same `context`.
    public func open(_ envelope: ArraySlice<UInt8>, authenticating context: [UInt8]) throws(SealingError) -> [UInt8] {
        guard let id = Self.keyID(of: envelope) else { throw .malformed }
        guard let key = key(id: id) else { throw .unknownKey(id) }
        let start = envelope.startIndex
        let prefixLength = 2 + key.idBytes.count
        guard envelope.count >= prefixLength + Self.nonceLength + Self.tagLength else { throw .malformed }
        let nonceStart = start + prefixLength
        do {
            // Nonce, ciphertext and tag lie in the envelope as GCM's combined form: one box, one copy (building it
            // from the three parts costs a disk hit more than the decryption does).
            let box = try AES.GCM.SealedBox(combined: envelope[nonceStart...])
            var authenticated = Array(envelope[start..<nonceStart])
            authenticated += context
            return Array(try AES.GCM.open(box, using: key.secret, authenticating: authenticated))
        } catch {
            throw .notAuthentic
        }
    }

    /// The ID of the key an envelope names, without opening it; `nil` when it is not an envelope.
    public static func keyID(of envelope: ArraySlice<UInt8>) -> String? {
        let start = envelope.startIndex
        guard envelope.count >= 2, envelope[start] == envelopeFormat else { return nil }
        let length = Int(envelope[start + 1])
        guard envelope.count >= 2 + length, length > 0,
            let id = String(validating: envelope[(start + 2)..<(start + 2 + length)], as: UTF8.self), isValidID(id)
        else { return nil }
        return id
    }
}

/// Why a value could not be sealed or opened. Never carries key material.
public enum SealingError: Error, Sendable, Equatable, CustomStringConvertible {
    /// Not an envelope of a known format.
    case malformed
    /// Sealed under a key that is not in the ring (removed, or another fleet's).
    case unknownKey(String)
    /// The tag does not verify: edited, moved to another place, or sealed under another key of the same ID.
    case notAuthentic
    /// The cipher refused to seal (never expected with a 32-byte key).
    case sealFailed

    public var description: String {
        switch self {
        case .malformed: "not a sealed value"
        case .unknownKey(let id): "sealed under key \(id), which is not in the key ring"
        case .notAuthentic: "does not open: edited, moved, or sealed under another key of the same ID"
        case .sealFailed: "AES-GCM refused to seal"
        }
    }
}
