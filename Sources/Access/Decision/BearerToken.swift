import HTTPRouting

/// The credential of `Authorization: Bearer TOKEN` (RFC 6750 §2.1; never from the query string).
enum BearerToken {
    /// The token (a view into the header, not a copy), or `nil` when the request carries no bearer credential
    /// (no header, another scheme, empty). Read from the header's bytes in place: on every request of `--auth jwt`
    /// the generic UTF-8 view's indexing cost about 1,000 instructions (callgrind), a tenth of the warm hit's own.
    static func from(_ headers: HTTPHeaders) -> Substring? {
        guard var header = headers["Authorization"] else { return nil }
        header.makeContiguousUTF8()  // a header value already is: nothing is copied
        let start = header.utf8.withContiguousStorageIfAvailable { bytes -> Int? in
            // "bearer" in any case (ASCII letters: | 0x20 lowers them), one space, then the token after any more.
            guard bytes.count > 7, bytes[0] | 0x20 == 0x62, bytes[1] | 0x20 == 0x65, bytes[2] | 0x20 == 0x61,
                  bytes[3] | 0x20 == 0x72, bytes[4] | 0x20 == 0x65, bytes[5] | 0x20 == 0x72, bytes[6] == 0x20
            else { return nil }
            var start = 7
            while start < bytes.count, bytes[start] == 0x20 { start += 1 }
            return start < bytes.count ? start : nil
        }
        guard let start = start ?? nil else { return nil }
        return header[header.utf8.index(header.startIndex, offsetBy: start)...]
    }
}
