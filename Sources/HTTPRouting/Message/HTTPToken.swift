/// RFC 9110's `token` (section 5.6.2): one or more `tchar`s, the grammar of field names, methods and media types.
/// The server's header check keeps its own bitmask on the hot path (`ArrivedHeaders.isToken`); a test holds the two to
/// the same 77 bytes.
package enum HTTPToken {
    /// `tchar`: a letter, a digit or one of ``!#$%&'*+-.^_`|~``.
    package static func isTokenByte(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "A")...UInt8(ascii: "Z"):
            return true
        default:
            return "!#$%&'*+-.^_`|~".utf8.contains(byte)
        }
    }

    /// Whether `text` is a token: not empty, every byte a `tchar`.
    package static func isToken(_ text: some StringProtocol) -> Bool {
        !text.isEmpty && text.utf8.allSatisfy(isTokenByte)
    }
}
