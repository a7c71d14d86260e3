import Foundation
import Redis
import UpstreamGate

extension ServeOptions {
    static let urlForm = "use http:// or https:// with a host and no query, e.g. http://upstream:9000"

    static let upstreamOption = DomainOption<String>(
        flag: "--upstream", variablePrefix: "UNICACHE_UPSTREAM_", valueName: "URL", kind: "an upstream URL",
        form: urlForm, example: "health=http://upstream:9000", parse: normalisedUpstreamURL)

    /// A domain may have several budgets of different windows (Strava: `200/15m` and `2000/1d`): the flag repeated,
    /// or separated by commas (the only way in its variable).
    static let rateOption = DomainOption<[RateWindow]>(
        flag: "--upstream-rate", variablePrefix: "UNICACHE_UPSTREAM_RATE_", valueName: "N/DURATION",
        kind: "a request budget",
        form: "use N/DURATION: at least 1 request per a duration above zero with ms, s, m, h or d, e.g. 200/15m",
        example: "activities=200/15m", oncePerDomain: false, parse: RateWindow.list(text:))

    static let concurrencyOption = DomainOption<Int>(
        flag: "--upstream-concurrency", variablePrefix: "UNICACHE_UPSTREAM_CONCURRENCY_", valueName: "N",
        kind: "a number of requests in flight", form: "use a whole number of at least 1, e.g. 64",
        example: "health=64", parse: { ValueSyntax.wholeNumber($0.trimmingWhitespace()).flatMap { $0 >= 1 ? $0 : nil } })

    static let headerOption = DomainOption<UpstreamHeader>(
        flag: "--upstream-header", variablePrefix: "UNICACHE_UPSTREAM_HEADER_", valueName: "NAME:VALUE",
        kind: "a header NAME:VALUE",
        form: "use NAME:VALUE, NAME a header name without spaces and not one the service sets itself ("
            + UpstreamHeader.reservedNames.joined(separator: ", ") + "), VALUE printable, e.g. Authorization:Bearer <token>",
        example: "activities=Authorization:Bearer <token>", oncePerDomain: false, secret: true, parse: UpstreamHeader.init(text:))

    /// Where each domain fetches and how it is protected (CONTRACT §1, §7).
    static func upstreamDomains(
        _ options: ServeOptions, resolver: SettingResolver
    ) throws(ConfigurationError) -> (urls: [UpstreamDomain: String], protection: [UpstreamDomain: UpstreamProtection]) {
        try rejectUnknownUpstreamVariables(resolver.environment)
        let urls = try upstreamOption.value(flags: options.upstreams, resolver: resolver)
        let rates = try rateOption.values(flags: options.upstreamRates, resolver: resolver).mapValues { $0.flatMap { $0 } }
        try rejectRepeatedWindows(rates)
        let concurrency = try concurrencyOption.value(flags: options.upstreamConcurrency, resolver: resolver)
        let headers = try headerOption.values(flags: options.upstreamHeaders, resolver: resolver)
        var protection: [UpstreamDomain: UpstreamProtection] = [:]
        for domain in UpstreamDomain.allCases where rates[domain] != nil || concurrency[domain] != nil || headers[domain] != nil {
            protection[domain] = UpstreamProtection(
                budgets: rates[domain] ?? [], concurrency: concurrency[domain] ?? UpstreamProtection.defaultConcurrency,
                headers: headers[domain] ?? [])
        }
        return (urls, protection)
    }

    /// `--upstream-user-share` (CONTRACT §15.2): 1–100, `%` allowed.
    static func userShare(_ flagValue: String?, resolver: SettingResolver) throws(ConfigurationError) -> UserShare {
        UserShare(
            percent: try resolver.value(
                flagValue, flag: "--upstream-user-share", default: UpstreamSettings().userShare.percent,
                format: .percent(example: "10, or 100 for a deployment with one user")))
    }

    /// Two budgets of one window length for one domain are a mistake (which one was meant?).
    private static func rejectRepeatedWindows(_ rates: [UpstreamDomain: [RateWindow]]) throws(ConfigurationError) {
        for domain in UpstreamDomain.allCases {
            let windows = rates[domain]?.map(\.window) ?? []
            if let repeated = windows.first(where: { window in windows.filter { $0 == window }.count > 1 }) {
                throw ConfigurationError(
                    message: "\(rateOption.flag): domain \(domain.rawValue) has two budgets for a window of "
                        + "\(ValueSyntax.text(of: repeated)) (give each window length at most once)")
            }
        }
    }

    /// A typo such as `UNICACHE_UPSTREAM_HELTH` is an error, not a silently ignored variable.
    private static func rejectUnknownUpstreamVariables(_ environment: [String: String]) throws(ConfigurationError) {
        let prefixes = [upstreamOption.variablePrefix, rateOption.variablePrefix, concurrencyOption.variablePrefix,
                        headerOption.variablePrefix]
        let known = Set(
            ["UNICACHE_UPSTREAM_TIMEOUT", "UNICACHE_UPSTREAM_USER_SHARE"]
                + prefixes.flatMap { prefix in UpstreamDomain.allCases.map { prefix + $0.rawValue.uppercased() } }
                + ResourceCatalog.placeholders.keys.map(pathVariable(of:)))
        let prefix = upstreamOption.variablePrefix
        if let unknown = environment.keys.filter({ $0.hasPrefix(prefix) && !known.contains($0) }).sorted().first {
            let names = UpstreamDomain.allCases.map { $0.rawValue.uppercased() }.joined(separator: ", ")
            throw ConfigurationError(
                message: "\(unknown): unknown upstream variable "
                    + "(use UNICACHE_UPSTREAM_<DOMAIN>, UNICACHE_UPSTREAM_RATE_<DOMAIN>, "
                    + "UNICACHE_UPSTREAM_CONCURRENCY_<DOMAIN>, UNICACHE_UPSTREAM_HEADER_<DOMAIN> or "
                    + "UNICACHE_UPSTREAM_PATH_<NAMESPACE>, DOMAIN one of \(names))")
        }
    }

    /// The URL without trailing `/` when it is `http(s)://host…` without query or fragment; else `nil`. The host is
    /// a host name or an IP address (the one host grammar, `RedisEndpoint.Address.isValidHost`) and a port from 1 to
    /// 65535: `http://999.1.1.1` or `http://up:0` would only fail every fetch.
    static func normalisedUpstreamURL(_ text: String) -> String? {
        var url = text.trimmingWhitespace()
        while url.hasSuffix("/") { url.removeLast() }
        guard let components = URLComponents(string: url),
            let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https",
            let host = components.host, !host.isEmpty,
            components.query == nil, components.fragment == nil
        else { return nil }
        let bare = host.hasPrefix("[") && host.hasSuffix("]") ? String(host.dropFirst().dropLast()) : host
        guard RedisEndpoint.Address.isValidHost(bare), components.port.map({ (1...65535).contains($0) }) ?? true
        else { return nil }
        return url
    }
}
