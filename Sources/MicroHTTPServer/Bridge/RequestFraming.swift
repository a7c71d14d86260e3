import HTTPRouting

/// Request framing checks libmicrohttpd 0.9.75 does not make (contract §2), or makes with an HTML answer.
enum RequestFraming {
    /// 400 (close) for a field name that is not a token, an HTTP/1.1 request without `Host`, with two or with a value
    /// that is no host, differing duplicate `Content-Length`, `Transfer-Encoding` twice or with `Content-Length`; 501
    /// (close) for a coding other than `chunked` (which libmicrohttpd would take as a body lasting until the connection
    /// closes); 413 (close) for a declared body over the limit; nil when the request may proceed. One pass over the
    /// headers, none for a request that carries neither framing header (most: a `GET`), where only the `Host` rules
    /// apply.
    static func problem(for arrived: ArrivedHeaders, isHTTP11: Bool, maxBodyBytes: Int) -> Problem? {
        if arrived.invalidName { return .invalidFieldName }
        if arrived.repeatedHost { return .badFraming(detail: "The request has more than one Host header.") }
        if arrived.invalidHost {
            return .badFraming(detail: "The Host header is not a host name or address with an optional port.")
        }
        guard arrived.hasFraming else { return isHTTP11 && !arrived.hasHost ? .missingHost : nil }
        return problem(for: arrived.headers, isHTTP11: isHTTP11, maxBodyBytes: maxBodyBytes)
    }

    /// 400 (close) for a request target with a NUL byte in it. libmicrohttpd hands the target over as a C string, cut
    /// at the NUL (`/v1/users/u1\0/x` would be read as `/v1/users/u1`); in its read buffer the request line's
    /// version starts one byte after the end of the target's text (the space before it overwritten by a NUL), so a
    /// version further on means the text was cut short. `targetEnd` and `version` are addresses, compared only.
    static func problem(targetEnd: Int, version: UnsafePointer<CChar>?) -> Problem? {
        guard let version, targetEnd != 0 else { return nil }
        let gap = Int(bitPattern: version) - (targetEnd + 1)
        // Within the line only: a version libmicrohttpd did not find in the line is a constant elsewhere.
        guard gap > 0, gap < 1 << 20 else { return nil }
        return .badFraming(detail: "The request target contains a NUL byte.")
    }

    static func problem(for headers: HTTPHeaders, isHTTP11: Bool, maxBodyBytes: Int) -> Problem? {
        var hasHost = false
        var transferEncodings = 0
        var unknownCoding = false
        var declared: Substring?
        var conflicting = false
        for field in headers {
            if field.name.equalsIgnoringASCIICase("Host") {
                hasHost = true
            } else if field.name.equalsIgnoringASCIICase("Content-Length") {
                let value = field.value.trimmingSpaces
                if let declared, declared != value { conflicting = true }
                declared = declared ?? value
            } else if field.name.equalsIgnoringASCIICase("Transfer-Encoding") {
                transferEncodings += 1
                unknownCoding = unknownCoding || !String(field.value.trimmingSpaces).equalsIgnoringASCIICase("chunked")
            }
        }
        if isHTTP11, !hasHost { return .missingHost }
        if unknownCoding {
            return Problem(
                type: Problem.typeURI("bad-framing"), status: 501,
                detail: "The only Transfer-Encoding supported is chunked; or send the body with Content-Length.",
                headers: ["Connection": "close"])
        }
        if transferEncodings > 1 {
            // Chunked applied twice (RFC 9112 section 6.1 forbids it), or read once by a proxy that took only one line.
            return .badFraming(detail: "The request has more than one Transfer-Encoding header.")
        }
        guard let declared else { return nil }
        if conflicting {
            return .badFraming(detail: "The request has conflicting Content-Length headers.")
        }
        if transferEncodings > 0 {
            return .badFraming(detail: "The request has both Content-Length and Transfer-Encoding.")
        }
        guard let length = Int(declared), length >= 0 else { return .invalidContentLength }
        if length > maxBodyBytes {
            return .contentTooLarge(limit: maxBodyBytes)
        }
        return nil
    }
}

extension String {
    fileprivate var trimmingSpaces: Substring {
        let view = Substring(self)
        let start = view.firstIndex { $0 != " " && $0 != "\t" } ?? view.endIndex
        let end = view[start...].lastIndex { $0 != " " && $0 != "\t" }.map { view.index(after: $0) } ?? start
        return view[start..<end]
    }
}

extension Problem {
    fileprivate static var missingHost: Problem { .badFraming(detail: "An HTTP/1.1 request must carry a Host header.") }
    fileprivate static var invalidFieldName: Problem {
        .badFraming(
            detail: "A header field's name is not a token: whitespace before its colon, or a control byte "
                + "(RFC 9110, section 5.1; RFC 9112, section 5.1).")
    }
    /// Also what the shim answers in libmicrohttpd's place for a `Content-Length` that is not a number (`DaemonOptions`).
    static var invalidContentLength: Problem { .badFraming(detail: "The request has an invalid Content-Length.") }
}
