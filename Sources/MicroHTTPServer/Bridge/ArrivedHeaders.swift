#if canImport(Glibc)
import Glibc
#endif
import HTTPRouting

/// A request's headers as they arrived, with what the server asks of every request noted from the raw names
/// while they are collected: whether `Host` came, whether a framing header (`Content-Length`,
/// `Transfer-Encoding`) did, and the client's `X-Request-ID`.
struct ArrivedHeaders {
    var headers = HTTPHeaders()
    var hasHost = false
    /// A `Content-Length` or `Transfer-Encoding` came: `RequestFraming` reads the headers.
    var hasFraming = false
    /// The first `X-Request-ID`'s value.
    var requestID: String?
    /// A field's name ends in a space or tab (`Content-Length : 3`): RFC 9112 forbids whitespace between a name and
    /// its colon, and libmicrohttpd keeps it in the name, so it would not see a framing header a proxy in front may
    /// have read (request smuggling). Answered 400 with the connection closed.
    var spaceBeforeColon = false

    /// Notes the field `name` (`count` bytes, not terminated) with its `value`. Names are told by length, then
    /// compared without case.
    mutating func note(_ name: UnsafePointer<CChar>, _ count: Int, value: String) {
        if count > 0, name[count - 1] == 0x20 || name[count - 1] == 0x09 { spaceBeforeColon = true }
        switch count {
        case 4: hasHost = hasHost || strncasecmp(name, "host", 4) == 0
        case RequestID.headerNameLiteral.utf8CodeUnitCount:
            if requestID == nil, strncasecmp(name, RequestID.cHeaderName, count) == 0 { requestID = value }
        case 14: hasFraming = hasFraming || strncasecmp(name, "content-length", 14) == 0
        case 17: hasFraming = hasFraming || strncasecmp(name, "transfer-encoding", 17) == 0
        default: break
        }
    }
}

extension RequestID {
    /// The header's name as a C string, for libmicrohttpd (a literal is stored with its terminating NUL).
    static var cHeaderName: UnsafePointer<CChar> {
        UnsafeRawPointer(headerNameLiteral.utf8Start).assumingMemoryBound(to: CChar.self)
    }
}
