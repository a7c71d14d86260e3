/// Percent-encoding of a value placed in an upstream URL (RFC 3986): every byte outside the unreserved set
/// (`A-Z a-z 0-9 - . _ ~`) as `%XX`, so that `auth0|5f7c` is `auth0%7C5f7c` and `a@b` is `a%40b` (CONTRACT §11.3).
package enum PathEncoding {
    package static func segment(_ value: String) -> String {
        guard !value.utf8.allSatisfy(isUnreserved) else { return value }
        var encoded = ""
        encoded.reserveCapacity(value.utf8.count * 3)
        for byte in value.utf8 {
            if isUnreserved(byte) {
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                encoded += "%" + String(byte >> 4, radix: 16, uppercase: true) + String(byte & 0xF, radix: 16, uppercase: true)
            }
        }
        return encoded
    }

    static func isUnreserved(_ byte: UInt8) -> Bool {
        (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A) || (byte >= 0x30 && byte <= 0x39)
            || byte == UInt8(ascii: "-") || byte == UInt8(ascii: ".") || byte == UInt8(ascii: "_") || byte == UInt8(ascii: "~")
    }
}
