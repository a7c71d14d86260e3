import HTTPRouting

/// The credential of `Authorization: Bearer TOKEN` (RFC 6750 §2.1; never from the query string).
enum BearerToken {
    /// The token (a view into the header, not a copy), or `nil` when the request carries no bearer credential
    /// (no header, another scheme, empty).
    static func from(_ headers: HTTPHeaders) -> Substring? {
        guard let header = headers["Authorization"] else { return nil }
        let utf8 = header.utf8
        guard utf8.count > 7, utf8.prefix(6).elementsEqual("bearer".utf8, by: { $0 | 0x20 == $1 }),
              utf8[utf8.index(utf8.startIndex, offsetBy: 6)] == UInt8(ascii: " ")
        else { return nil }
        let token = utf8.dropFirst(7).drop(while: { $0 == UInt8(ascii: " ") })
        guard !token.isEmpty else { return nil }
        return Substring(token)
    }
}
