import UnifiedCache

/// The query string sent upstream: the normalised items in order, each name and value
/// percent-encoded (RFC 3986 unreserved characters plus `,` `:` `@` `/` stay as they are,
/// so `types=ride,run` goes out unchanged while `&`, `=`, `+`, `#`, `%` and spaces are encoded).
extension HTTPUpstreamFetcher {
    static func queryString(_ items: [QueryItem]) -> String {
        items.map { percentEncode($0.name) + "=" + percentEncode($0.value) }.joined(separator: "&")
    }

    static func percentEncode(_ text: String) -> String {
        var encoded = ""
        encoded.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            if isKept(byte) {
                encoded.unicodeScalars.append(Unicode.Scalar(byte))
            } else {
                encoded += "%" + hexDigit(byte >> 4) + hexDigit(byte & 0x0f)
            }
        }
        return encoded
    }

    private static func isKept(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
            UInt8(ascii: "0")...UInt8(ascii: "9"):
            return true
        case UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"), UInt8(ascii: "~"),
            UInt8(ascii: ","), UInt8(ascii: ":"), UInt8(ascii: "@"), UInt8(ascii: "/"):
            return true
        default:
            return false
        }
    }

    private static func hexDigit(_ nibble: UInt8) -> String {
        String(nibble, radix: 16, uppercase: true)
    }
}
