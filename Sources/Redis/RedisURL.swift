import Foundation

/// A parsed `--redis` URL: `redis://[user:password@]host[:port][/db]`, `rediss://…` (TLS), or
/// `redis-sentinel://[user:password@]host[:port][,host[:port]…][/db]?master=NAME[&sentinel-password=…][&tls=true]`
/// (Sentinels on 26379 by default; the user and password are the data nodes'). Passwords may be percent-encoded;
/// IPv6 hosts go in brackets. `description` never shows a password.
public struct RedisURL: Sendable, Hashable, CustomStringConvertible {
    public struct Address: Sendable, Hashable, CustomStringConvertible {
        public var host: String
        public var port: Int
        public init(host: String, port: Int) {
            self.host = host
            self.port = port
        }
        public var description: String { host.contains(":") ? "[\(host)]:\(port)" : "\(host):\(port)" }
    }

    public enum Target: Sendable, Hashable {
        case node(Address)
        /// The Sentinels to ask, in order, for the primary of `masterName`.
        case sentinel(sentinels: [Address], masterName: String, sentinelPassword: String?)
    }

    public var target: Target
    /// TLS to every node (`rediss://`, or `?tls=true` on `redis-sentinel://`).
    public var tls: Bool
    public var username: String?
    public var password: String?
    public var database: Int

    /// `passwordGivenApart`: the password comes from elsewhere (`--redis-password-file`), so a user without one is
    /// not an error.
    public init(_ url: String, passwordGivenApart: Bool = false) throws(RedisURLError) {
        guard let schemeEnd = url.firstRange(of: "://") else {
            throw RedisURLError("Redis URL must look like redis://[[user]:password@]host[:port][/db] (or rediss://, redis-sentinel://)")
        }
        let scheme = url[..<schemeEnd.lowerBound].lowercased()
        guard ["redis", "rediss", "redis-sentinel"].contains(scheme) else {
            // The scheme is echoed only when it looks like one (no credentials can hide in it).
            let shown = scheme.count <= 16 && !scheme.isEmpty && scheme.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
            throw RedisURLError("Redis URL scheme must be redis://, rediss:// or redis-sentinel://\(shown ? " (got \(scheme)://)" : "")")
        }
        var rest = url[schemeEnd.upperBound...]
        guard !rest.contains("#") else { throw RedisURLError("Redis URL must not have a fragment") }
        var query: Substring = ""
        if let mark = rest.firstIndex(of: "?") {
            guard scheme == "redis-sentinel" else {
                throw RedisURLError("Redis URL must not have a query (only redis-sentinel:// takes ?master=NAME)")
            }
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        // The last "@" separates the credentials however the password is written.
        if let at = rest.lastIndex(of: "@") {
            let userInfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
            let colon = userInfo.firstIndex(of: ":")
            let user = try Self.decoded(userInfo[..<(colon ?? userInfo.endIndex)], "user")
            guard user.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F }) else {
                throw RedisURLError("Redis URL user has an invalid percent-encoding or a space or control character")
            }
            username = user.isEmpty ? nil : user
            if let colon {
                let secret = try Self.decoded(userInfo[userInfo.index(after: colon)...], "password")
                password = secret.isEmpty ? nil : secret
            }
            if username != nil, password == nil, !passwordGivenApart {
                throw RedisURLError("Redis URL names a user without a password (redis://user:password@host)")
            }
        }
        var hosts = rest
        database = 0
        if let slash = rest.firstIndex(of: "/") {
            hosts = rest[..<slash]
            let path = rest[rest.index(after: slash)...]
            if !path.isEmpty {
                guard let value = Self.decimal(path) else {
                    throw RedisURLError("Redis URL database must be a number from 0 to 999999999\(Self.echo(path))")
                }
                database = value
            }
        }
        var parameters: [String: String] = [:]
        for pair in query.split(separator: "&") where !pair.isEmpty {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0])
            guard ["master", "sentinel-password", "tls"].contains(name) else {
                throw RedisURLError("Redis URL query parameter is not known (redis-sentinel:// takes master, sentinel-password, tls)")
            }
            parameters[name] = try Self.decoded(parts.count > 1 ? parts[1] : "", name)
        }
        if scheme == "redis-sentinel" {
            guard let masterName = parameters["master"], !masterName.isEmpty else {
                throw RedisURLError("redis-sentinel:// URL needs ?master=NAME")
            }
            let sentinels = try hosts.split(separator: ",", omittingEmptySubsequences: false).map {
                text throws(RedisURLError) in try Self.address(text, defaultPort: 26379)
            }
            let password = parameters["sentinel-password"].flatMap { $0.isEmpty ? nil : $0 }
            target = .sentinel(sentinels: sentinels, masterName: masterName, sentinelPassword: password)
            switch parameters["tls"] {
            case nil, "false": tls = false
            case "true": tls = true
            default: throw RedisURLError("Redis URL tls= must be true or false")
            }
        } else {
            target = .node(try Self.address(hosts, defaultPort: 6379))
            tls = scheme == "rediss"
        }
    }

    /// A URL's parts, as made by hand (a test's server, a `host:port` from Sentinel).
    public init(target: Target, tls: Bool = false, username: String? = nil, password: String? = nil, database: Int = 0) {
        self.target = target
        self.tls = tls
        self.username = username
        self.password = password
        self.database = database
    }

    /// The URL with the password (and a Sentinel password) replaced by `***`.
    public var description: String {
        let credentials: String
        switch (username, password) {
        case (nil, nil): credentials = ""
        case (let user?, nil): credentials = "\(user)@"
        case (let user, _?): credentials = "\(user ?? ""):***@"
        }
        switch target {
        case .node(let address):
            return "\(tls ? "rediss" : "redis")://\(credentials)\(address)/\(database)"
        case .sentinel(let sentinels, let masterName, let sentinelPassword):
            let list = sentinels.map(\.description).joined(separator: ",")
            let secret = sentinelPassword == nil ? "" : "&sentinel-password=***"
            return "redis-sentinel://\(credentials)\(list)/\(database)?master=\(masterName)\(secret)\(tls ? "&tls=true" : "")"
        }
    }

    /// A data node's connection: this URL's user, password, database and TLS (`tlsOptions` when TLS is on).
    public func configuration(
        for address: Address, tlsOptions: RedisTLSOptions = RedisTLSOptions(), commandTimeout: Duration = .milliseconds(50)
    ) -> RedisConnectionConfiguration {
        RedisConnectionConfiguration(
            host: address.host, port: address.port, tls: tls ? tlsOptions : nil, username: username, password: password,
            database: database, commandTimeout: commandTimeout)
    }

    private static func address(_ text: Substring, defaultPort: Int) throws(RedisURLError) -> Address {
        var host = text
        var portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else { throw RedisURLError("Redis URL host has an unclosed [ (IPv6 address)") }
            host = text[text.index(after: text.startIndex)..<close]
            let after = text[text.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw RedisURLError("Redis URL has text after an IPv6 address") }
                portText = after.dropFirst()
            }
        } else if let colon = text.firstIndex(of: ":") {
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard !host.isEmpty else { throw RedisURLError("Redis URL has no host") }
        var port = defaultPort
        if let portText {
            guard let value = decimal(portText), (1...65535).contains(value) else {
                throw RedisURLError("Redis URL port must be a number from 1 to 65535\(echo(portText))")
            }
            port = value
        }
        return Address(host: String(host), port: port)
    }

    /// " (got 70000)" for a number out of range; nothing for other text, which might be a misplaced password.
    private static func echo(_ text: Substring) -> String {
        text.count <= 20 && text.allSatisfy({ $0.isASCII && ($0.isNumber || $0 == "-") }) && !text.isEmpty
            ? " (got \(text))" : ""
    }

    private static func decimal(_ text: Substring) -> Int? {
        guard !text.isEmpty, text.count <= 9, text.allSatisfy({ $0.isASCII && $0.isNumber }) else { return nil }
        return Int(text)
    }

    /// Percent-decoded UTF-8 (Foundation's decoder); the error names the part, never its text (it may be a password).
    private static func decoded(_ text: Substring, _ part: String) throws(RedisURLError) -> String {
        guard let decoded = String(text).removingPercentEncoding else {
            throw RedisURLError("Redis URL \(part) has an invalid percent-encoding (or is not UTF-8)")
        }
        return decoded
    }
}

/// A Redis URL that could not be parsed. The message never contains a password.
public struct RedisURLError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
