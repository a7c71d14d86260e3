/// Where Redis is: parsed from `redis://[[user]:password@]host[:port][/db]`.
///
/// With a user name the connection authenticates as that ACL user (`AUTH user password`, CONTRACT §10.2); without
/// one, a one-argument AUTH authenticates Redis's default user. User and password may be percent-encoded (`%40`
/// for `@`). IPv6 hosts go in brackets (`[::1]`).
public struct RedisEndpoint: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int
    /// The ACL user (Redis 6+); `nil`: the default user.
    public var user: String?
    public var password: String?
    public var database: Int

    public init(host: String, port: Int, user: String? = nil, password: String? = nil, database: Int = 0) {
        self.host = host
        self.port = port
        self.user = user
        self.password = password
        self.database = database
    }

    /// The AUTH command a new connection sends: `AUTH user password` for an ACL user, `AUTH password` for the
    /// default one; `nil` without a password.
    public var authArguments: [String]? {
        guard let password else { return nil }
        if let user { return ["AUTH", user, password] }
        return ["AUTH", password]
    }

    public init(url: String) throws(RedisEndpointError) {
        let schemeEnd = url.firstRange(of: "://")
        guard let schemeEnd else {
            throw RedisEndpointError("Redis URL must look like redis://[[user]:password@]host[:port][/db]")
        }
        let scheme = url[..<schemeEnd.lowerBound].lowercased()
        guard scheme == "redis" else {
            // The scheme is echoed only when it looks like one (no credentials can hide in it).
            let shown = scheme.count <= 16 && scheme.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
            throw RedisEndpointError(
                shown && !scheme.isEmpty
                    ? "Redis URL scheme must be redis:// (got \(scheme)://)"
                    : "Redis URL scheme must be redis://")
        }
        var rest = url[schemeEnd.upperBound...]
        if rest.contains("?") || rest.contains("#") {
            throw RedisEndpointError("Redis URL must not have a query or fragment")
        }
        // Authority up to the first "/" after the last "@" (a password may contain "/" only encoded,
        // but the last "@" is the separator however the password is written).
        var password: String?
        var user: String?
        if let at = rest.lastIndex(of: "@") {
            let userInfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
            let colon = userInfo.firstIndex(of: ":")
            let encodedUser = userInfo[..<(colon ?? userInfo.endIndex)]
            guard let decodedUser = Self.percentDecoded(encodedUser),
                decodedUser.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F })
            else {
                throw RedisEndpointError("Redis URL user has an invalid percent-encoding or a space or control character")
            }
            user = decodedUser.isEmpty ? nil : decodedUser
            if let colon {
                let encoded = userInfo[userInfo.index(after: colon)...]
                guard let decoded = Self.percentDecoded(encoded) else {
                    throw RedisEndpointError("Redis URL password has an invalid percent-encoding")
                }
                password = decoded.isEmpty ? nil : decoded
            }
            if user != nil, password == nil {
                throw RedisEndpointError("Redis URL names a user without a password (redis://user:password@host)")
            }
        }
        let authority: Substring
        let path: Substring
        if let slash = rest.firstIndex(of: "/") {
            authority = rest[..<slash]
            path = rest[rest.index(after: slash)...]
        } else {
            authority = rest
            path = ""
        }

        let host: Substring
        var portText: Substring?
        if authority.hasPrefix("[") {
            guard let close = authority.firstIndex(of: "]") else {
                throw RedisEndpointError("Redis URL host has an unclosed [ (IPv6 address)")
            }
            host = authority[authority.index(after: authority.startIndex)..<close]
            let after = authority[authority.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else {
                    throw RedisEndpointError("Redis URL has unexpected text after the IPv6 address")
                }
                portText = after.dropFirst()
            }
        } else if let colon = authority.firstIndex(of: ":") {
            host = authority[..<colon]
            portText = authority[authority.index(after: colon)...]
        } else {
            host = authority
        }
        guard !host.isEmpty else { throw RedisEndpointError("Redis URL has no host") }

        var port = 6379
        if let portText {
            guard let value = Self.decimal(portText), (1...65535).contains(value) else {
                throw RedisEndpointError("Redis URL port must be a number from 1 to 65535\(Self.echo(portText))")
            }
            port = value
        }
        var database = 0
        if !path.isEmpty {
            guard let value = Self.decimal(path) else {
                throw RedisEndpointError("Redis URL database must be a number from 0 to 999999999\(Self.echo(path))")
            }
            database = value
        }
        self.init(host: String(host), port: port, user: user, password: password, database: database)
    }

    /// The URL with the password replaced by "***": what logs, /stats and errors may show (the user is named).
    public var description: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        let credentials = password == nil ? "" : "\(user ?? ""):***@"
        return "redis://\(credentials)\(shownHost):\(port)/\(database)"
    }

    /// " (got 70000)" for a number out of range; nothing for other text, which might be a
    /// misplaced password.
    private static func echo(_ text: Substring) -> String {
        text.count <= 20 && text.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == "-") }) && !text.isEmpty
            ? " (got \(text))" : ""
    }

    /// Digits only (no sign, no spaces), at most 9 of them.
    private static func decimal(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.count <= 9, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(text)
    }

    private static func percentDecoded(_ text: Substring) -> String? {
        var bytes: [UInt8] = []
        var iterator = text.utf8.makeIterator()
        while let byte = iterator.next() {
            guard byte == UInt8(ascii: "%") else {
                bytes.append(byte)
                continue
            }
            guard let high = iterator.next().flatMap(hexValue), let low = iterator.next().flatMap(hexValue) else {
                return nil
            }
            bytes.append(high << 4 | low)
        }
        return String(validating: bytes, as: UTF8.self)
    }

    private static func hexValue(_ byte: UInt8) -> UInt8? {
        switch byte {
        case UInt8(ascii: "0")...UInt8(ascii: "9"): byte - UInt8(ascii: "0")
        case UInt8(ascii: "a")...UInt8(ascii: "f"): byte - UInt8(ascii: "a") + 10
        case UInt8(ascii: "A")...UInt8(ascii: "F"): byte - UInt8(ascii: "A") + 10
        default: nil
        }
    }
}

/// A Redis URL that could not be parsed. The message never contains the password.
public struct RedisEndpointError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String

    public init(_ message: String) {
        self.message = message
    }

    public var description: String { message }
}
