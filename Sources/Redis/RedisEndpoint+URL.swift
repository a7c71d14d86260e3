import Foundation

extension RedisEndpoint {
    /// Parses a `--redis` URL: `redis://[user:password@]host[:port][/db]`, `rediss://…` (TLS), or
    /// `redis-sentinel://[user:password@]host[:port][,host[:port]…][/db]?master=NAME[&sentinel-password=…][&tls=true]`
    /// (Sentinels on 26379 by default; the user and password are the data nodes'). With `cluster`, `redis://` and
    /// `rediss://` name a seed node of a Redis Cluster, more seeds as `?addr=host:port&addr=…`, database 0 alone
    /// (`Target.cluster`). User and password may be
    /// percent-encoded (`%40` for `@`); IPv6 hosts go in brackets. TLS starts with the default options (the system's
    /// trust store, the URL's host verified). `passwordGivenApart`: the password comes from elsewhere
    /// (`--redis-password-file`), so a user without one is not an error. Throws `RedisError.invalidURL`, whose message
    /// never contains a password.
    public init(url: String, passwordGivenApart: Bool = false, cluster: Bool = false) throws(RedisError) {
        guard let schemeEnd = url.firstRange(of: "://") else {
            throw RedisError.invalidURL(
                "Redis URL must look like redis://[[user]:password@]host[:port][/db] (or rediss://, redis-sentinel://)")
        }
        let scheme = url[..<schemeEnd.lowerBound].lowercased()
        guard ["redis", "rediss", "redis-sentinel"].contains(scheme) else {
            // The scheme is echoed only when it looks like one (no credentials can hide in it).
            let shown = scheme.count <= 16 && !scheme.isEmpty && scheme.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) }
            throw RedisError.invalidURL(
                "Redis URL scheme must be redis://, rediss:// or redis-sentinel://\(shown ? " (got \(scheme)://)" : "")")
        }
        var rest = url[schemeEnd.upperBound...]
        guard !rest.contains("#") else { throw RedisError.invalidURL("Redis URL must not have a fragment") }
        var query: Substring = ""
        if let mark = rest.firstIndex(of: "?") {
            guard scheme == "redis-sentinel" || cluster else {
                throw RedisError.invalidURL(
                    "Redis URL must not have a query (only redis-sentinel:// takes ?master=NAME, and a cluster's seed ?addr=HOST:PORT)")
            }
            query = rest[rest.index(after: mark)...]
            rest = rest[..<mark]
        }
        var (username, password): (String?, String?) = (nil, nil)
        // The last "@" separates the credentials however the password is written.
        if let at = rest.lastIndex(of: "@") {
            let userInfo = rest[..<at]
            rest = rest[rest.index(after: at)...]
            let colon = userInfo.firstIndex(of: ":")
            let user = try Self.decoded(userInfo[..<(colon ?? userInfo.endIndex)], "user")
            guard user.unicodeScalars.allSatisfy({ $0.value > 0x20 && $0.value != 0x7F }) else {
                throw RedisError.invalidURL("Redis URL user has an invalid percent-encoding or a space or control character")
            }
            username = user.isEmpty ? nil : user
            if let colon {
                let secret = try Self.decoded(userInfo[userInfo.index(after: colon)...], "password")
                password = secret.isEmpty ? nil : secret
            }
            if username != nil, password == nil, !passwordGivenApart {
                throw RedisError.invalidURL("Redis URL names a user without a password (redis://user:password@host)")
            }
        }
        var hosts = rest
        var database = 0
        if let slash = rest.firstIndex(of: "/") {
            hosts = rest[..<slash]
            let path = rest[rest.index(after: slash)...]
            if !path.isEmpty {
                guard let value = Self.decimal(path) else {
                    throw RedisError.invalidURL("Redis URL database must be a number from 0 to 999999999\(Self.echo(path))")
                }
                database = value
            }
        }
        var parameters: [String: String] = [:]
        var moreSeeds: [Address] = []
        for pair in query.split(separator: "&") where !pair.isEmpty {
            let parts = pair.split(separator: "=", maxSplits: 1, omittingEmptySubsequences: false)
            let name = String(parts[0])
            let value = parts.count > 1 ? parts[1] : ""
            if scheme != "redis-sentinel", name == "addr" {
                moreSeeds.append(try Self.address(value, defaultPort: 6379))
                continue
            }
            guard scheme == "redis-sentinel", ["master", "sentinel-password", "tls"].contains(name) else {
                throw RedisError.invalidURL(
                    "Redis URL query parameter is not known (redis-sentinel:// takes master, sentinel-password, tls; a cluster's seed addr)")
            }
            parameters[name] = try Self.decoded(value, name)
        }
        if cluster {
            guard scheme != "redis-sentinel" else {
                throw RedisError.invalidURL("a Redis Cluster is named by a seed node, redis:// or rediss://, not redis-sentinel://")
            }
            guard database == 0 else { throw RedisError.invalidURL("a Redis Cluster has database 0 only") }
            self.init(
                target: .cluster(seeds: [try Self.address(hosts, defaultPort: 6379)] + moreSeeds),
                tls: scheme == "rediss" ? RedisTLSOptions() : nil, user: username, password: password)
        } else if scheme == "redis-sentinel" {
            guard let masterName = parameters["master"], !masterName.isEmpty else {
                throw RedisError.invalidURL("redis-sentinel:// URL needs ?master=NAME")
            }
            let sentinels = try hosts.split(separator: ",", omittingEmptySubsequences: false).map {
                text throws(RedisError) in try Self.address(text, defaultPort: 26379)
            }
            let sentinelPassword = parameters["sentinel-password"].flatMap { $0.isEmpty ? nil : $0 }
            let tls: Bool
            switch parameters["tls"] {
            case nil, "false": tls = false
            case "true": tls = true
            default: throw RedisError.invalidURL("Redis URL tls= must be true or false")
            }
            self.init(
                target: .sentinel(sentinels: sentinels, masterName: masterName, password: sentinelPassword),
                tls: tls ? RedisTLSOptions() : nil, user: username, password: password, database: database)
        } else {
            self.init(
                target: .node(try Self.address(hosts, defaultPort: 6379)), tls: scheme == "rediss" ? RedisTLSOptions() : nil,
                user: username, password: password, database: database)
        }
    }

    private static func address(_ text: Substring, defaultPort: Int) throws(RedisError) -> Address {
        var host = text
        var portText: Substring?
        if text.hasPrefix("[") {
            guard let close = text.firstIndex(of: "]") else {
                throw RedisError.invalidURL("Redis URL host has an unclosed [ (IPv6 address)")
            }
            host = text[text.index(after: text.startIndex)..<close]
            let after = text[text.index(after: close)...]
            if !after.isEmpty {
                guard after.hasPrefix(":") else { throw RedisError.invalidURL("Redis URL has text after an IPv6 address") }
                portText = after.dropFirst()
            }
        } else if let colon = text.firstIndex(of: ":") {
            host = text[..<colon]
            portText = text[text.index(after: colon)...]
        }
        guard !host.isEmpty else { throw RedisError.invalidURL("Redis URL has no host") }
        // `999.1.1.1`, `a b` or `host.123` would only fail each connection: refused here, at start-up.
        guard Address.isValidHost(String(host)) else {
            throw RedisError.invalidURL("Redis URL host must be a host name or an IP address (IPv6 in brackets)")
        }
        var port = defaultPort
        if let portText {
            guard let value = decimal(portText), (1...65535).contains(value) else {
                throw RedisError.invalidURL("Redis URL port must be a number from 1 to 65535\(echo(portText))")
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
    private static func decoded(_ text: Substring, _ part: String) throws(RedisError) -> String {
        guard let decoded = String(text).removingPercentEncoding else {
            throw RedisError.invalidURL("Redis URL \(part) has an invalid percent-encoding (or is not UTF-8)")
        }
        return decoded
    }
}
