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
    /// `Host` came more than once (RFC 9112 section 3.2: a 400; which one names the target?).
    var repeatedHost = false
    /// A `Content-Length` or `Transfer-Encoding` came: `RequestFraming` reads the headers.
    var hasFraming = false
    /// The first `X-Request-ID`'s value.
    var requestID: String?
    /// A field's name is not a token (RFC 9110, section 5.1): whitespace before its colon (`Content-Length : 3`, which
    /// RFC 9112 makes a 400), a vertical tab, a control byte, a byte past ASCII, or nothing. libmicrohttpd keeps such
    /// bytes in the name, so it would not see a framing header a proxy in front may have read, trimmed (request
    /// smuggling). Answered 400 with the connection closed.
    var invalidName = false

    /// Notes the field `name` (`count` bytes, not terminated) with its `value`. Names are told by length, then
    /// compared without case.
    mutating func note(_ name: UnsafePointer<CChar>, _ count: Int, value: String) {
        if !Self.isToken(name, count) { invalidName = true }
        switch count {
        case 4:
            if strncasecmp(name, "host", 4) == 0 {
                repeatedHost = hasHost
                hasHost = true
            }
        case RequestID.headerNameLiteral.utf8CodeUnitCount:
            if requestID == nil, strncasecmp(name, RequestID.cHeaderName, count) == 0 { requestID = value }
        case 14: hasFraming = hasFraming || strncasecmp(name, "content-length", 14) == 0
        case 17: hasFraming = hasFraming || strncasecmp(name, "transfer-encoding", 17) == 0
        default: break
        }
    }
}

extension ArrivedHeaders {
    /// Whether the `count` bytes at `name` are one or more of RFC 9110's `tchar`s.
    static func isToken(_ name: UnsafePointer<CChar>, _ count: Int) -> Bool {
        guard count > 0 else { return false }
        for index in 0..<count {
            let byte = UInt64(UInt8(bitPattern: name[index]))
            let bits = byte < 64 ? tokenBytesBelow64 : byte < 128 ? tokenBytesFrom64 : 0
            // A masking shift: `<<` would check for a shift past the width on every byte.
            if (bits &>> (byte & 63)) & 1 == 0 { return false }
        }
        return true
    }

    /// `tchar` as one bit per ASCII byte: `! # $ % & ' * + - .` and the digits among bytes 0–63; the letters, `^`,
    /// `_`, the backtick, `|` and `~` among bytes 64–127.
    private static var tokenBytesBelow64: UInt64 { 0x03ff_6cfa_0000_0000 }
    private static var tokenBytesFrom64: UInt64 { 0x57ff_ffff_c7ff_fffe }
}

extension RequestID {
    /// The header's name as a C string, for libmicrohttpd (a literal is stored with its terminating NUL).
    static var cHeaderName: UnsafePointer<CChar> {
        UnsafeRawPointer(headerNameLiteral.utf8Start).assumingMemoryBound(to: CChar.self)
    }
}
