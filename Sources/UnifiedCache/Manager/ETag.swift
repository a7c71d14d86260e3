import Crypto

/// Strong entity tags derived from a body's bytes.
public enum ETag {
    /// A quoted strong validator: the first 128 bits of the body's SHA-256, in hex (always 34 characters).
    public static func make(for body: [UInt8]) -> String {
        let digest = SHA256.hash(data: body)
        var text = "\""
        for byte in digest.prefix(16) {
            text += String(byte >> 4, radix: 16) + String(byte & 0x0F, radix: 16)
        }
        return text + "\""
    }
}
