extension ServeOptions {
    /// `--ttl NAMESPACE=DURATION` flags; each namespace at most once.
    static func ttlOverrides(_ items: [String]) throws(ConfigurationError) -> [String: Duration] {
        let namespaces = CacheSettings.namespaces.joined(separator: ", ")
        var overrides: [String: Duration] = [:]
        for item in items {
            guard let equals = item.firstIndex(of: "=") else {
                throw ConfigurationError(
                    source: "--ttl", value: item, isNot: "NAMESPACE=DURATION",
                    form: "use e.g. wellness=10m, NAMESPACE one of \(namespaces)")
            }
            let namespace = item[..<equals].trimmingWhitespace().lowercased()
            guard CacheSettings.namespaces.contains(namespace) else {
                throw ConfigurationError(
                    message: "--ttl: \(ConfigurationError.quoted(item)) names an unknown namespace "
                        + "\(ConfigurationError.quoted(namespace)) (use NAMESPACE=DURATION, NAMESPACE one of \(namespaces))")
            }
            let text = item[item.index(after: equals)...].trimmingWhitespace()
            guard let ttl = ValueSyntax.duration(text) else {
                throw ConfigurationError(
                    message: "--ttl: \(ConfigurationError.quoted(item)) has no valid duration "
                        + "(use NAMESPACE=DURATION with a whole number and ms, s, m, h or d, e.g. \(namespace)=10m)")
            }
            guard overrides.updateValue(ttl, forKey: namespace) == nil else {
                throw ConfigurationError(
                    message: "--ttl: namespace \(namespace) is given twice (give each namespace at most once)")
            }
        }
        return overrides
    }
}
