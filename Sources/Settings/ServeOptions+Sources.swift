extension ServeOptions {
    /// `--demo DOMAIN,…|all|none` (CONTRACT §11.1): which domains the demo fetchers serve. Default: every domain
    /// when no `--upstream` is given (`make run`), none once one is, so that a missing variable in production answers
    /// 503 instead of invented health data. `all` is every domain without an upstream; a domain named with an
    /// upstream too is an error.
    static func demoDomains(
        _ flagValue: String?, urls: [UpstreamDomain: String], resolver: SettingResolver
    ) throws(ConfigurationError) -> Set<UpstreamDomain> {
        guard let (text, source) = resolver.text(flag: flagValue, named: "--demo") else {
            return urls.isEmpty ? Set(UpstreamDomain.allCases) : []
        }
        let form = "use all, none, or a comma-separated list of \(DomainOption<String>.domainList), e.g. health,progress"
        let words = text.split(separator: ",", omittingEmptySubsequences: false).map { $0.trimmingWhitespace().lowercased() }
        var domains: Set<UpstreamDomain> = []
        switch words {
        case ["all"]: return Set(UpstreamDomain.allCases.filter { urls[$0] == nil })  // every domain without an upstream
        case ["none"]: domains = []
        default:
            for word in words {
                guard let domain = UpstreamDomain(rawValue: word) else {
                    throw ConfigurationError(source: source, value: text, isNot: "a list of demo domains", form: form)
                }
                domains.insert(domain)
            }
        }
        if let both = UpstreamDomain.allCases.first(where: { domains.contains($0) && urls[$0] != nil }) {
            throw ConfigurationError(
                message: "\(source): domain \(both.rawValue) has an --upstream too (a domain is served by its upstream or "
                    + "by the demo, not both: drop it from \(source))")
        }
        return domains
    }

    /// `--upstream-path NAMESPACE=TEMPLATE` (repeatable) and `UNICACHE_UPSTREAM_PATH_<NAMESPACE>` (`.` as `_`):
    /// each template starts with `/`, names only its route's placeholders and every one its key is made of (CONTRACT
    /// §11.6); its namespace's domain has an upstream.
    static func upstreamPaths(
        _ flags: [String], urls: [UpstreamDomain: String], resolver: SettingResolver
    ) throws(ConfigurationError) -> [String: UpstreamPathTemplate] {
        let example = "activities=/api/v3/athletes/{user}/activities?days={days}&types={types}"
        var given: [String: (text: String, source: String)] = [:]
        for namespace in ResourceCatalog.placeholders.keys {
            let name = pathVariable(of: namespace)
            if let text = resolver.environmentValue(name) { given[namespace] = (text, name) }
        }
        var fromFlags: Set<String> = []
        for item in flags {
            guard let equals = item.firstIndex(of: "=") else {
                throw ConfigurationError(
                    message: "--upstream-path: \"\(item)\" is not NAMESPACE=TEMPLATE (e.g. \(example))")
            }
            let namespace = String(item[..<equals])
            guard ResourceCatalog.placeholders[namespace] != nil else {
                throw ConfigurationError(
                    message: "--upstream-path: \"\(namespace)\" is not a read-through namespace (use one of "
                        + "\(ResourceCatalog.placeholders.keys.sorted().joined(separator: ", ")))")
            }
            guard fromFlags.insert(namespace).inserted else {
                throw ConfigurationError(message: "--upstream-path: namespace \(namespace) is given twice")
            }
            given[namespace] = (String(item[item.index(after: equals)...]), "--upstream-path")
        }
        var templates: [String: UpstreamPathTemplate] = [:]
        for (namespace, setting) in given {
            let available = ResourceCatalog.placeholders[namespace] ?? []
            let template: UpstreamPathTemplate
            do {
                template = try UpstreamPathTemplate(setting.text, available: available)
            } catch {
                throw ConfigurationError(
                    message: "\(setting.source): the template of \(namespace) is not usable: \(error.reason) (e.g. \(example))")
            }
            let missing = ResourceCatalog.keyPlaceholdersMissing(from: template, namespace: namespace)
            guard missing.isEmpty else {
                let (them, part) = missing.count == 1 ? ("it", "part") : ("them", "parts")
                throw ConfigurationError(
                    message: "\(setting.source): the template of \(namespace) leaves out \(missing.joined(separator: ", ")), "
                        + "\(part) of its cache key \(ResourceCatalog.keyShapes[namespace] ?? namespace): add \(them), or the "
                        + "upstream would answer data that the key does not describe")
            }
            templates[namespace] = template
            if let domain = ResourceCatalog.domains[namespace], urls[domain] == nil {
                throw ConfigurationError(
                    message: "\(setting.source): namespace \(namespace) is served by domain \(domain.rawValue), which has "
                        + "no --upstream (give --upstream \(domain.rawValue)=URL)")
            }
        }
        return templates
    }

    /// `UNICACHE_UPSTREAM_PATH_HEALTH_TODAY` for `health.today`.
    static func pathVariable(of namespace: String) -> String {
        "UNICACHE_UPSTREAM_PATH_" + namespace.uppercased().replacingAll(".", with: "_")
    }
}
