/// A `Content-Type` value (RFC 9110 section 8.3.1): `type "/" subtype` of tokens, then parameters. A stored raw body
/// is served back with the type it came with, so it must be one a reader can parse.
package enum MediaType {
    /// `true` for `type/subtype` (tokens, optional whitespace after) and, after a `;`, parameters of visible ASCII,
    /// spaces and tabs (not parsed further: they are served back as given).
    package static func isValid(_ value: String) -> Bool {
        let bytes = Array(value.utf8)
        let semicolon = bytes.firstIndex(of: UInt8(ascii: ";")) ?? bytes.endIndex
        var essence = bytes[..<semicolon]
        while let last = essence.last, last == UInt8(ascii: " ") || last == UInt8(ascii: "\t") { essence.removeLast() }
        let parts = essence.split(separator: UInt8(ascii: "/"), omittingEmptySubsequences: false)
        return parts.count == 2 && parts.allSatisfy { !$0.isEmpty && $0.allSatisfy(HTTPToken.isTokenByte) }
            && bytes[semicolon...].allSatisfy { ($0 >= 0x20 && $0 < 0x7F) || $0 == UInt8(ascii: "\t") }
    }
}
