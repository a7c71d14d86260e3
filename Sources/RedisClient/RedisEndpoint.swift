/// Where Redis is: parsed from `redis://[[user]:password@]host[:port][/db]`.
///
/// A user name is accepted and ignored: a one-argument AUTH authenticates Redis 7's default user.
/// The password may be percent-encoded (`%40` for `@`). IPv6 hosts go in brackets (`[::1]`).
public struct RedisEndpoint: Sendable, Equatable, CustomStringConvertible {
    public var host: String
    public var port: Int
    public var password: String?
    public var database: Int

    public init(host: String, port: Int, password: String? = nil, database: Int = 0) {
        self.host = host
        self.port = port
        self.password = password
        self.database = database
    }

    public init(url: String) throws(RedisEndpointError) {
        let schemeEnd = url.firstRange(of: "://")
        guard let schemeEnd else {
            throw RedisEndpointError("Redis URL must look like redis://[:password@]host[:port][/db]")
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
        if let at = rest.lastIndex(of: "@") {
            let userInfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
            if let colon = userInfo.firstIndex(of: ":") {
                let encoded = userInfo[userInfo.index(after: colon)...]
                guard let decoded = Self.percentDecoded(encoded) else {
                    throw RedisEndpointError("Redis URL password has an invalid percent-encoding")
                }
                password = decoded.isEmpty ? nil : decoded
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
        self.init(host: String(host), port: port, password: password, database: database)
    }

    /// The URL with the password replaced by "***": what logs, /stats and errors may show.
    public var description: String {
        let shownHost = host.contains(":") ? "[\(host)]" : host
        let credentials = password == nil ? "" : ":***@"
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
