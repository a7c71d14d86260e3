import Foundation
import UnifiedCache

/// The cache keys of the read-through namespaces (CONTRACT §3): what an `--upstream-path` template must carry (§11.6)
/// and which raw keys the routes own (§14.3).
extension ResourceTable {
    /// Each namespace's key as docs/routes.md writes it (a test holds it to the keys the rows make).
    static let keyShapes: [String: String] = [
        "health.today": "health:today:{user}:{date}",
        "health.averages": "health:avg:{user}:{weekday}",
        "health.metrics": "health:{metric}:{user}:{date}",
        "wellness": "wellness:{user}:{days}",
        "scores": "scores:{user}:{date}",
        "activities": "activities:{user}:{types}:{days}",
        "streams": "streams:{user}:{id}",
        "subscription": "subscription:{user}",
        "profile": "profile:{user}",
        "progress.history": "progress:history:{user}",
        "progress.streak": "progress:streak:{user}",
        "progress.today": "progress:today:{user}:{date}",
        "progress.any": "progress:any:{user}",
    ]

    /// The metrics of `/health/metrics/{metric}/{date}`.
    static let metrics = ["hrv", "rhr", "sleep"]

    /// The placeholders of a namespace's key, in order (`["user", "types", "days"]` for `activities`).
    static func keyPlaceholders(_ namespace: String) -> [String] {
        guard let shape = keyShapes[namespace] else { return [] }
        return shape.split(separator: ":").compactMap { part in
            part.hasPrefix("{") && part.hasSuffix("}") ? String(part.dropFirst().dropLast()) : nil
        }
    }

    /// The key placeholders a template for `namespace` leaves out, as `{name}`. A key's `{date}` on a route with
    /// `{tz}` is the date in that zone: a template naming `{tz}` decides it too.
    static func keyPlaceholdersMissing(from template: UpstreamPathTemplate, namespace: String) -> [String] {
        let available = placeholders[namespace] ?? []
        let named = { (name: String) in template.text.contains("{\(name)}") }
        return keyPlaceholders(namespace).compactMap { name in
            if named(name) { return nil }
            if name == "date", available.contains("tz") { return named("tz") ? nil : "{date} (or {tz}, which decides it)" }
            return "{\(name)}"
        }
    }

    /// The raw keys the read-through routes own: each key's part before `{user}` (one per metric for
    /// `health.metrics`), followed by a user. A raw PUT may not take one (409), and erasure of a user removes every
    /// entry under one that names the user.
    static let userKeys = UserKeys(
        prefixes: keyShapes.values.sorted().flatMap { shape -> [String] in
            let prefix = String(shape[..<(shape.range(of: "{user}")?.lowerBound ?? shape.endIndex)])
            return prefix.contains("{metric}") ? metrics.map { prefix.replacingOccurrences(of: "{metric}", with: $0) } : [prefix]
        })
}
