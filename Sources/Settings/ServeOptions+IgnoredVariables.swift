import ArgumentParser

/// A `UNICACHE_` variable the service does not read, and the one it most likely meant.
public struct IgnoredVariable: Sendable, Equatable {
    public var name: String
    /// The variable of a flag a typo or two away (`UNICACHE_MEMORY_LIMT` → `UNICACHE_MEMORY_LIMIT`), if any.
    public var suggestion: String?
}

extension ServeOptions {
    /// Every variable `serve` reads on its own: one per flag of its help (`--memory-limit` → `UNICACHE_MEMORY_LIMIT`),
    /// and `top`'s `UNICACHE_TOP_URL`, which a shared environment holds too. The per-domain `UNICACHE_UPSTREAM_…`
    /// family is checked, strictly, where it is read.
    static let readVariables: Set<String> = {
        let help = ServeOptions.helpMessage(includeHidden: true, columns: 10_000)
        var names: Set<String> = ["UNICACHE_TOP_URL"]
        for word in help.split(whereSeparator: { !($0.isLetter || $0.isNumber || $0 == "-") }) where word.hasPrefix("--") {
            names.insert(SettingResolver.environmentName(of: String(word)))
        }
        return names
    }()

    /// The `UNICACHE_` variables of `environment` that `serve` does not read, sorted: a typo there is otherwise a
    /// setting silently left at its default (an unknown flag stops start-up; a variable may belong to a script that
    /// starts the service, so it is told, not refused). Values are never looked at: they may be secrets.
    public static func ignoredVariables(in environment: [String: String]) -> [IgnoredVariable] {
        environment.keys.filter { name in
            name.hasPrefix("UNICACHE_") && !name.hasPrefix("UNICACHE_UPSTREAM_") && !readVariables.contains(name)
        }.sorted().map { name in
            let nearest = readVariables.map { ($0, editDistance($0, name)) }.min { ($0.1, $0.0) < ($1.1, $1.0) }
            return IgnoredVariable(name: name, suggestion: nearest.flatMap { $0.1 <= 2 ? $0.0 : nil })
        }
    }

    /// Levenshtein distance between two names (a few dozen characters, so the plain table).
    static func editDistance(_ a: String, _ b: String) -> Int {
        let a = Array(a.utf8), b = Array(b.utf8)
        var previous = Array(0...b.count)
        for (i, x) in a.enumerated() {
            var current = [i + 1] + Array(repeating: 0, count: b.count)
            for (j, y) in b.enumerated() {
                current[j + 1] = min(previous[j + 1] + 1, current[j] + 1, previous[j] + (x == y ? 0 : 1))
            }
            previous = current
        }
        return previous[b.count]
    }
}
