/// Picks each setting from its flag, else its `UNICACHE_` environment variable, else its default.
struct SettingResolver {
    let environment: [String: String]

    /// `--memory-limit` → `UNICACHE_MEMORY_LIMIT`.
    static func environmentName(of flag: String) -> String {
        "UNICACHE_" + flag.drop { $0 == "-" }.uppercased().replacingAll("-", with: "_")
    }

    /// The environment variable's value, `nil` when unset or blank (a blank variable counts as unset).
    func environmentValue(_ name: String) -> String? {
        guard let text = environment[name], !text.trimmingWhitespace().isEmpty else { return nil }
        return text
    }

    /// The text of a setting and where it came from, or `nil` when neither the flag nor the variable is set.
    func text(flag value: String?, named flag: String) -> (text: String, source: String)? {
        if let value { return (value, flag) }
        let name = Self.environmentName(of: flag)
        return environmentValue(name).map { ($0, name) }
    }

    func value<Value>(
        _ flagValue: String?, flag: String, default defaultValue: Value, format: ValueFormat<Value>
    ) throws(ConfigurationError) -> Value {
        guard let (text, source) = text(flag: flagValue, named: flag) else { return defaultValue }
        return try format.value(of: text, from: source)
    }
}

extension String {
    func replacingAll(_ target: Character, with replacement: Character) -> String {
        String(map { $0 == target ? replacement : $0 })
    }
}
