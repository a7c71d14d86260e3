import HTTPRouting

/// The credential of `Authorization: Bearer TOKEN` (RFC 6750 §2.1; never from the query string): the one parser
/// of it, for the access decision and the admin check alike (CONTRACT §8.9).
public enum BearerToken {
    /// What a request's `Authorization` header says.
    public enum Credential: Equatable {
        /// No `Authorization` header, or another scheme, or `Bearer` with nothing after it.
        case none
        /// `Bearer` (any case), one or more spaces, then the token: where it lies in the header, not a copy.
        case token(Token)
        /// More than one `Authorization` header: which one counts would be a guess (400, CONTRACT §8.9).
        case repeated
    }

    /// The request's credential, from one pass over its headers.
    public static func credential(_ headers: HTTPHeaders) -> Credential {
        guard headers.mayContain(anyOf: authorizationBit) else { return .none }
        // The fields lent in place: a copy of the array, and of each name and the value, is a reference count each.
        return headers.fields.withUnsafeBufferPointer { fields in
            var found: Int?
            for index in fields.indices where fields[index].name.equalsIgnoringASCIICase("Authorization") {
                if found != nil { return .repeated }
                found = index
            }
            guard let found else { return .none }
            return token(in: fields.baseAddress! + found).map(Credential.token) ?? .none
        }
    }

    private static let authorizationBit = HTTPHeaders.bits(of: "Authorization")

    /// A bearer token where it lies: the `Authorization` value it came in (contiguous UTF-8) and the offset of its
    /// first byte. Its bytes are read in place on every request of `--auth jwt`; cutting a `Substring` from the
    /// header (and reading one's bytes) cost a few hundred instructions and reference counts a request.
    public struct Token: Equatable, Sendable {
        let header: String
        let start: Int

        /// The token as text: a view into the header.
        public var text: Substring {
            let utf8 = header.utf8
            return Substring(utf8[utf8.index(utf8.startIndex, offsetBy: start)...])
        }

        /// The token's bytes, in place.
        func withBytes<R>(_ body: (UnsafeBufferPointer<UInt8>) -> R) -> R {
            header.utf8.withContiguousStorageIfAvailable { body(UnsafeBufferPointer(rebasing: $0[start...])) }
                ?? Array(header.utf8[header.utf8.index(header.utf8.startIndex, offsetBy: start)...])
                    .withUnsafeBufferPointer(body)
        }

        public static func == (lhs: Token, rhs: Token) -> Bool { lhs.text == rhs.text }
    }

    /// The token of a field's value, found in its bytes where the field lies (a copy of the value to read it would be
    /// a reference count more a request; only the token keeps one). A value not stored as contiguous UTF-8 (bridged)
    /// is made so first.
    private static func token(in field: UnsafePointer<HTTPHeaders.Field>) -> Token? {
        if let start = field.pointee.value.utf8.withContiguousStorageIfAvailable(tokenStart) {
            return start.map { Token(header: field.pointee.value, start: $0) }
        }
        var contiguous = field.pointee.value
        contiguous.makeContiguousUTF8()
        return (contiguous.utf8.withContiguousStorageIfAvailable(tokenStart) ?? nil).map {
            Token(header: contiguous, start: $0)
        }
    }

    /// Where the token starts: after `bearer` in any case (ASCII letters: | 0x20 lowers them), one space and any more.
    private static func tokenStart(_ bytes: UnsafeBufferPointer<UInt8>) -> Int? {
        guard bytes.count > 7, bytes[0] | 0x20 == 0x62, bytes[1] | 0x20 == 0x65, bytes[2] | 0x20 == 0x61,
              bytes[3] | 0x20 == 0x72, bytes[4] | 0x20 == 0x65, bytes[5] | 0x20 == 0x72, bytes[6] == 0x20
        else { return nil }
        var start = 7
        while start < bytes.count, bytes[start] == 0x20 { start += 1 }
        return start < bytes.count ? start : nil
    }

    /// 400 for a request with more than one `Authorization` header.
    static func repeatedProblem() -> Response {
        Problem.badRequest(
            detail: "The request carries more than one Authorization header; send exactly one.",
            type: Problem.typeURI("repeated-authorization")
        ).response
    }
}
