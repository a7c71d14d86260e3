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
    /// A `Host` value is not a host and optional port (RFC 9112 section 3.2: a 400): a byte that no host name, IP
    /// address or port has (a space, `/`, `@`, a control byte, a byte past ASCII).
    var invalidHost = false
    /// A `Content-Length` or `Transfer-Encoding` came: `RequestFraming` reads the headers.
    var hasFraming = false
    /// The first `X-Request-ID`'s value.
    var requestID: String?
    /// A field's name is not a token (RFC 9110, section 5.1): whitespace before its colon (`Content-Length : 3`, which
    /// RFC 9112 makes a 400), a vertical tab, a control byte, a byte past ASCII, or nothing. libmicrohttpd keeps such
    /// bytes in the name, so it would not see a framing header a proxy in front may have read, trimmed (request
    /// smuggling). Answered 400 with the connection closed.
    var invalidName = false

    /// Notes the field `name` (`count` bytes, not terminated) with its `value` (`bytes`, as it arrived, trimmed).
    /// Names are told by length, then compared without case.
    mutating func note(_ name: UnsafePointer<CChar>, _ count: Int, value: String, bytes: UnsafeRawBufferPointer) {
        if !Self.isToken(UnsafeRawBufferPointer(start: name, count: count)) { invalidName = true }
        switch count {
        case 4:
            if strncasecmp(name, "host", 4) == 0 {
                repeatedHost = hasHost
                hasHost = true
                invalidHost = invalidHost || !Self.isHost(bytes)
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
    /// Whether `name` is one or more of RFC 9110's `tchar`s.
    static func isToken(_ name: UnsafeRawBufferPointer) -> Bool {
        !name.isEmpty && all(name, below64: tokenBytesBelow64, from64: tokenBytesFrom64)
    }

    /// Whether `value` is made of the bytes of RFC 3986's `host` and a port: unreserved, sub-delims, `%`, `:`, `[`
    /// and `]` (not checked further: the service answers every host alike). Empty is allowed (RFC 9112 section 3.2).
    static func isHost(_ value: UnsafeRawBufferPointer) -> Bool {
        all(value, below64: hostBytesBelow64, from64: hostBytesFrom64)
    }

    /// Whether every byte is in the set the masks give, one bit per ASCII byte (bytes 0–63, then 64–127).
    /// The four words of the set are on the stack: a byte's word is loaded by its top two bits (no branch, no select).
    private static func all(_ bytes: UnsafeRawBufferPointer, below64: UInt64, from64: UInt64) -> Bool {
        withUnsafeBytes(of: (below64, from64, UInt64(0), UInt64(0))) { words in
            for byte in bytes {
                let word = words.load(fromByteOffset: Int(byte &>> 6) &<< 3, as: UInt64.self)
                // A masking shift: `<<` would check for a shift past the width on every byte.
                if (word &>> UInt64(byte & 63)) & 1 == 0 { return false }
            }
            return true
        }
    }

    /// `tchar` as one bit per ASCII byte: `! # $ % & ' * + - .` and the digits among bytes 0–63; the letters, `^`,
    /// `_`, the backtick, `|` and `~` among bytes 64–127.
    private static var tokenBytesBelow64: UInt64 { 0x03ff_6cfa_0000_0000 }
    private static var tokenBytesFrom64: UInt64 { 0x57ff_ffff_c7ff_fffe }
    /// A host's and port's bytes: `! $ % & ' ( ) * + , - .`, the digits, `:`, `;` and `=` among bytes 0–63; the
    /// letters, `[`, `]`, `_` and `~` among bytes 64–127.
    private static var hostBytesBelow64: UInt64 { 0x2fff_7ff2_0000_0000 }
    private static var hostBytesFrom64: UInt64 { 0x47ff_fffe_afff_fffe }
}

extension RequestID {
    /// The header's name as a C string, for libmicrohttpd (a literal is stored with its terminating NUL).
    static var cHeaderName: UnsafePointer<CChar> {
        UnsafeRawPointer(headerNameLiteral.utf8Start).assumingMemoryBound(to: CChar.self)
    }
}
