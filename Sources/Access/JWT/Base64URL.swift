import Foundation

/// base64url without padding (RFC 7515 §2), as JWS parts are encoded.
enum Base64URL {
    /// The decoded bytes, or `nil` for anything but unpadded base64url.
    static func decode(_ text: some Collection<UInt8>) -> [UInt8]? {
        var standard: [UInt8] = []
        standard.reserveCapacity(text.count + 3)
        for byte in text {
            switch byte {
            case UInt8(ascii: "-"): standard.append(UInt8(ascii: "+"))
            case UInt8(ascii: "_"): standard.append(UInt8(ascii: "/"))
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                UInt8(ascii: "0")...UInt8(ascii: "9"):
                standard.append(byte)
            default: return nil
            }
        }
        guard standard.count % 4 != 1 else { return nil }
        // RFC 4648 section 3.5: the bits of the last character past the encoded bytes are zero. Foundation ignores
        // them, so a signature would have up to 16 spellings, each a token of its own to anything that tells tokens
        // apart by their text.
        if let last = standard.last, standard.count % 4 != 0 {
            let unusedBits: UInt8 = standard.count % 4 == 2 ? 0x0F : 0x03
            guard sextet(last) & unusedBits == 0 else { return nil }
        }
        standard.append(contentsOf: repeatElement(UInt8(ascii: "="), count: (4 - standard.count % 4) % 4))
        return Data(base64Encoded: Data(standard)).map { Array($0) }
    }

    /// The six bits a base64 character (already checked to be one, `-` and `_` made `+` and `/`) stands for.
    private static func sextet(_ byte: UInt8) -> UInt8 {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"): byte - UInt8(ascii: "A")
        case UInt8(ascii: "a")...UInt8(ascii: "z"): byte - UInt8(ascii: "a") + 26
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0") + 52
        case UInt8(ascii: "+"): 62
        default: 63
        }
    }
}
