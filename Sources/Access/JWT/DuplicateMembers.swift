/// Whether a JSON text repeats a member name in any of its objects (CONTRACT §8.9 "one meaning per token").
///
/// Foundation's `JSONDecoder` keeps the first of two members with the same name, silently, where most JOSE
/// libraries keep the last: two verifiers would read one token two ways. This scan runs over the bytes before
/// they are decoded and compares names after their escapes are undone (`"\u006bid"` is `"kid"`).
/// It only looks for repeated names: a text that is not JSON at all is left to the decoder to refuse.
package enum DuplicateMembers {
    /// True when some object in `bytes` names a member twice, or when the text is too broken to tell.
    package static func found(in bytes: some Collection<UInt8>) -> Bool {
        var scanner = Scanner(bytes: Array(bytes))
        return !scanner.valueHasUniqueMembers(depth: 0)
    }

    private struct Scanner {
        let bytes: [UInt8]
        var offset = 0
        /// Deeper nesting than any JOSE header or claim set needs is refused (and bounds the recursion).
        static let maxDepth = 32

        init(bytes: [UInt8]) { self.bytes = bytes }

        mutating func skipWhitespace() {
            while offset < bytes.count, bytes[offset] == 0x20 || bytes[offset] == 0x09 || bytes[offset] == 0x0A
                || bytes[offset] == 0x0D
            {
                offset += 1
            }
        }

        /// Scans one value; false when an object in it repeats a name (or the text cannot be scanned).
        mutating func valueHasUniqueMembers(depth: Int) -> Bool {
            guard depth <= Self.maxDepth else { return false }
            skipWhitespace()
            guard offset < bytes.count else { return false }
            switch bytes[offset] {
            case UInt8(ascii: "{"):
                // Names are compared as Swift strings (canonical equivalence, which includes byte equality): two
                // names that a dictionary would merge are refused too, so that the decoded claims have one reading.
                var names: Set<String> = []
                return elements(closedBy: UInt8(ascii: "}")) { scanner in
                    guard scanner.offset < scanner.bytes.count, scanner.bytes[scanner.offset] == UInt8(ascii: "\""),
                        let name = scanner.string(), names.insert(String(decoding: name, as: UTF8.self)).inserted
                    else { return false }
                    scanner.skipWhitespace()
                    guard scanner.offset < scanner.bytes.count, scanner.bytes[scanner.offset] == UInt8(ascii: ":")
                    else { return false }
                    scanner.offset += 1
                    return scanner.valueHasUniqueMembers(depth: depth + 1)
                }
            case UInt8(ascii: "["):
                return elements(closedBy: UInt8(ascii: "]")) { $0.valueHasUniqueMembers(depth: depth + 1) }
            case UInt8(ascii: "\""):
                return string() != nil
            default:
                // A number, true, false or null: up to the next delimiter (the decoder checks its form).
                while offset < bytes.count, !Self.isDelimiter(bytes[offset]) { offset += 1 }
                return true
            }
        }

        /// The elements of an object or array whose opening bracket is at `offset`, separated by commas, up to
        /// `closing`; `element` scans one (a member, or a value) and says whether it is fine.
        private mutating func elements(closedBy closing: UInt8, _ element: (inout Scanner) -> Bool) -> Bool {
            offset += 1
            skipWhitespace()
            if offset < bytes.count, bytes[offset] == closing {
                offset += 1
                return true
            }
            while true {
                skipWhitespace()
                guard element(&self) else { return false }
                skipWhitespace()
                guard offset < bytes.count else { return false }
                if bytes[offset] == UInt8(ascii: ",") {
                    offset += 1
                    continue
                }
                guard bytes[offset] == closing else { return false }
                offset += 1
                return true
            }
        }

        /// A string at `offset` (its opening quote), unescaped into UTF-8 bytes; `nil` when malformed.
        private mutating func string() -> [UInt8]? {
            offset += 1
            var out: [UInt8] = []
            while offset < bytes.count {
                let byte = bytes[offset]
                offset += 1
                switch byte {
                case UInt8(ascii: "\""):
                    return out
                case UInt8(ascii: "\\"):
                    guard offset < bytes.count else { return nil }
                    let escape = bytes[offset]
                    offset += 1
                    switch escape {
                    case UInt8(ascii: "\""), UInt8(ascii: "\\"), UInt8(ascii: "/"): out.append(escape)
                    case UInt8(ascii: "b"): out.append(0x08)
                    case UInt8(ascii: "f"): out.append(0x0C)
                    case UInt8(ascii: "n"): out.append(0x0A)
                    case UInt8(ascii: "r"): out.append(0x0D)
                    case UInt8(ascii: "t"): out.append(0x09)
                    case UInt8(ascii: "u"):
                        guard let scalar = unicodeEscape() else { return nil }
                        out += Array(String(Character(scalar)).utf8)
                    default: return nil
                    }
                default:
                    guard byte >= 0x20 else { return nil }
                    out.append(byte)
                }
            }
            return nil
        }

        /// The scalar of `\uXXXX` (after the `u`), joining a surrogate pair; a lone surrogate is U+FFFD.
        private mutating func unicodeEscape() -> Unicode.Scalar? {
            guard let high = hex4() else { return nil }
            if (0xD800...0xDBFF).contains(high), offset + 1 < bytes.count, bytes[offset] == UInt8(ascii: "\\"),
                bytes[offset + 1] == UInt8(ascii: "u")
            {
                let mark = offset
                offset += 2
                if let low = hex4(), (0xDC00...0xDFFF).contains(low) {
                    return Unicode.Scalar(0x10000 + ((high - 0xD800) << 10) + (low - 0xDC00))
                }
                offset = mark
            }
            return Unicode.Scalar(high) ?? Unicode.Scalar(0xFFFD)
        }

        private mutating func hex4() -> UInt32? {
            guard bytes.count - offset >= 4 else { return nil }
            var value: UInt32 = 0
            for _ in 0..<4 {
                let byte = bytes[offset]
                offset += 1
                let digit: UInt8
                switch byte {
                case UInt8(ascii: "0")...UInt8(ascii: "9"): digit = byte - UInt8(ascii: "0")
                case UInt8(ascii: "a")...UInt8(ascii: "f"): digit = byte - UInt8(ascii: "a") + 10
                case UInt8(ascii: "A")...UInt8(ascii: "F"): digit = byte - UInt8(ascii: "A") + 10
                default: return nil
                }
                value = value << 4 | UInt32(digit)
            }
            return value
        }

        private static func isDelimiter(_ byte: UInt8) -> Bool {
            byte == UInt8(ascii: ",") || byte == UInt8(ascii: "}") || byte == UInt8(ascii: "]") || byte == 0x20
                || byte == 0x09 || byte == 0x0A || byte == 0x0D
        }
    }
}
