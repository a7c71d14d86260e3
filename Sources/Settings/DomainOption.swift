/// A repeatable `--FLAG DOMAIN=VALUE` whose fallback is one `<variablePrefix><DOMAIN>` variable per domain
/// (`--upstream`, `--upstream-rate`, `--upstream-concurrency`, `--upstream-header`; CONTRACT §1, §7). The
/// variables' names are a fixed set, so `UNICACHE_UPSTREAM_RATE_SUBSCRIPTION` is the budget of `subscription`,
/// never the URL of a domain called `RATE_SUBSCRIPTION`. A domain's flags win over its variable.
struct DomainOption<Value>: Sendable {
    var flag: String
    /// `UNICACHE_UPSTREAM_RATE_`: the domain's name in capitals follows.
    var variablePrefix: String
    /// What VALUE is, in errors: `URL`, `budget`.
    var valueName: String
    /// VALUE as a noun with its article, for a bad variable: `an upstream URL`.
    var kind: String
    /// How to write VALUE, in errors.
    var form: String
    /// A whole `DOMAIN=VALUE`, in errors.
    var example: String
    /// Each domain at most once; else every flag of a domain adds a value (headers).
    var oncePerDomain = true
    /// The value may hold a secret (a credential): errors never quote it.
    var secret = false
    /// VALUE's meaning, nil when it is not valid.
    var parse: @Sendable (String) -> Value?

    static var domainList: String { UpstreamDomain.allCases.map(\.rawValue).joined(separator: ", ") }

    func variable(of domain: UpstreamDomain) -> String { variablePrefix + domain.rawValue.uppercased() }

    func values(flags: [String], resolver: SettingResolver) throws(ConfigurationError) -> [UpstreamDomain: [Value]] {
        var values: [UpstreamDomain: [Value]] = [:]
        for domain in UpstreamDomain.allCases {
            let name = variable(of: domain)
            guard let text = resolver.environmentValue(name) else { continue }
            guard let value = parse(text) else {
                if secret { throw ConfigurationError(message: "\(name): the value is not \(kind) (\(form))") }
                throw ConfigurationError(source: name, value: text, isNot: kind, form: form)
            }
            values[domain] = [value]
        }
        var given: [UpstreamDomain: [Value]] = [:]
        for item in flags {
            let (domain, value) = try flagValue(item)
            if oncePerDomain, given[domain] != nil {
                throw ConfigurationError(
                    message: "\(flag): domain \(domain.rawValue) is given twice (give each domain at most once)")
            }
            given[domain, default: []].append(value)
        }
        return values.merging(given) { _, fromFlags in fromFlags }
    }

    /// The single value of each domain that has one.
    func value(flags: [String], resolver: SettingResolver) throws(ConfigurationError) -> [UpstreamDomain: Value] {
        try values(flags: flags, resolver: resolver).compactMapValues(\.first)
    }

    private func flagValue(_ item: String) throws(ConfigurationError) -> (UpstreamDomain, Value) {
        guard let equals = item.firstIndex(of: "=") else {
            if secret {
                throw ConfigurationError(
                    message: "\(flag): a value is not DOMAIN=\(valueName) (use e.g. \(example), DOMAIN one of \(Self.domainList))")
            }
            throw ConfigurationError(
                source: flag, value: item, isNot: "DOMAIN=\(valueName)",
                form: "use e.g. \(example), DOMAIN one of \(Self.domainList)")
        }
        let name = item[..<equals].trimmingWhitespace()
        guard let domain = UpstreamDomain(rawValue: name.lowercased()) else {
            if secret {
                throw ConfigurationError(
                    message: "\(flag): unknown domain \(ConfigurationError.quoted(name)) "
                        + "(use DOMAIN=\(valueName), DOMAIN one of \(Self.domainList))")
            }
            throw ConfigurationError(
                message: "\(flag): \(ConfigurationError.quoted(item)) names an unknown domain "
                    + "\(ConfigurationError.quoted(name)) (use DOMAIN=\(valueName), DOMAIN one of \(Self.domainList))")
        }
        let text = String(item[item.index(after: equals)...])
        guard let value = parse(text) else {
            if secret {
                throw ConfigurationError(message: "\(flag): the value for \(domain.rawValue) is not \(kind) (\(form))")
            }
            throw ConfigurationError(
                message: "\(flag): \(ConfigurationError.quoted(item)) has an invalid \(valueName) "
                    + "\(ConfigurationError.quoted(text)) (\(form))")
        }
        return (domain, value)
    }
}
