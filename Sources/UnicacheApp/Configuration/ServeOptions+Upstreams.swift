import Foundation

extension ServeOptions {
    private static let domainList = UpstreamDomain.allCases.map(\.rawValue).joined(separator: ", ")
    private static let urlForm = "use http:// or https:// with a host and no query, e.g. http://upstream:9000"

    /// `UNICACHE_UPSTREAM_<DOMAIN>` variables, overridden per domain by `--upstream DOMAIN=URL` flags.
    static func upstreamURLs(
        flags: [String], resolver: SettingResolver
    ) throws(ConfigurationError) -> [UpstreamDomain: String] {
        var urls: [UpstreamDomain: String] = [:]
        try rejectUnknownUpstreamVariables(resolver.environment)
        for domain in UpstreamDomain.allCases {
            guard let text = resolver.environmentValue(domain.environmentName) else { continue }
            guard let url = normalisedUpstreamURL(text) else {
                throw ConfigurationError(source: domain.environmentName, value: text, isNot: "an upstream URL", form: urlForm)
            }
            urls[domain] = url
        }
        var given: Set<UpstreamDomain> = []
        for item in flags {
            let (domain, url) = try upstreamFlag(item)
            guard given.insert(domain).inserted else {
                throw ConfigurationError(
                    message: "--upstream: domain \(domain.rawValue) is given twice (give each domain at most once)")
            }
            urls[domain] = url
        }
        return urls
    }

    private static func upstreamFlag(_ item: String) throws(ConfigurationError) -> (UpstreamDomain, String) {
        guard let equals = item.firstIndex(of: "=") else {
            throw ConfigurationError(
                source: "--upstream", value: item, isNot: "DOMAIN=URL",
                form: "use e.g. health=http://upstream:9000, DOMAIN one of \(domainList)")
        }
        let name = item[..<equals].trimmingWhitespace()
        guard let domain = UpstreamDomain(rawValue: name.lowercased()) else {
            throw ConfigurationError(
                message: "--upstream: \(ConfigurationError.quoted(item)) names an unknown domain "
                    + "\(ConfigurationError.quoted(name)) (use DOMAIN=URL, DOMAIN one of \(domainList))")
        }
        let text = String(item[item.index(after: equals)...])
        guard let url = normalisedUpstreamURL(text) else {
            throw ConfigurationError(
                message: "--upstream: \(ConfigurationError.quoted(item)) has an invalid URL "
                    + "\(ConfigurationError.quoted(text)) (\(urlForm))")
        }
        return (domain, url)
    }

    /// A typo such as `UNICACHE_UPSTREAM_HELTH` is an error, not a silently ignored variable.
    private static func rejectUnknownUpstreamVariables(_ environment: [String: String]) throws(ConfigurationError) {
        let known = Set(UpstreamDomain.allCases.map(\.environmentName) + ["UNICACHE_UPSTREAM_TIMEOUT"])
        let prefix = "UNICACHE_UPSTREAM_"
        if let unknown = environment.keys.filter({ $0.hasPrefix(prefix) && !known.contains($0) }).sorted().first {
            let names = UpstreamDomain.allCases.map { $0.rawValue.uppercased() }.joined(separator: ", ")
            throw ConfigurationError(
                message: "\(unknown): unknown upstream domain \(ConfigurationError.quoted(String(unknown.dropFirst(prefix.count)))) "
                    + "(use \(prefix)<DOMAIN> with DOMAIN one of \(names))")
        }
    }

    /// The URL without trailing `/` when it is `http(s)://host…` without query or fragment; else `nil`.
    static func normalisedUpstreamURL(_ text: String) -> String? {
        var url = text.trimmingWhitespace()
        while url.hasSuffix("/") { url.removeLast() }
        guard let components = URLComponents(string: url),
            let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = components.host, !host.isEmpty,
            components.query == nil, components.fragment == nil
        else { return nil }
        return url
    }
}
