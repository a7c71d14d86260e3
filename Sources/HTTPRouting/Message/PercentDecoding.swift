/// A `%` not followed by two hex digits.
public struct PercentDecodingError: Error, Sendable, Equatable {
    public init() {}
}

/// RFC 3986 percent-decoding of one path segment or query component.
enum PercentDecoding {
    /// Decodes `%HH` escapes (and `+` as space when asked). The result may hold any byte,
    /// including `/` and NUL: callers validate it. Invalid UTF-8 is repaired with U+FFFD.
    static func decode<Bytes: Collection<UInt8>>(
        _ bytes: Bytes, plusAsSpace: Bool
    ) throws(PercentDecodingError) -> String {
        // Fast path: nothing to decode.
        if !bytes.contains(where: { $0 == UInt8(ascii: "%") || (plusAsSpace && $0 == UInt8(ascii: "+")) }) {
            return String(decoding: bytes, as: UTF8.self)
        }
        var output: [UInt8] = []
        output.reserveCapacity(bytes.count)
        var index = bytes.startIndex
        while index < bytes.endIndex {
            let byte = bytes[index]
            if byte == UInt8(ascii: "%") {
                let high = bytes.index(after: index)
                guard high < bytes.endIndex else { throw PercentDecodingError() }
                let low = bytes.index(after: high)
                guard low < bytes.endIndex,
                      let highValue = hexValue(bytes[high]), let lowValue = hexValue(bytes[low])
                else { throw PercentDecodingError() }
                output.append(highValue << 4 | lowValue)
                index = bytes.index(after: low)
            } else {
                output.append(plusAsSpace && byte == UInt8(ascii: "+") ? UInt8(ascii: " ") : byte)
                index = bytes.index(after: index)
            }
        }
        return String(decoding: output, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}
