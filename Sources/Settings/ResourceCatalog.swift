/// The read-through namespaces as the configuration sees them (CONTRACT §3, §11): each one's domain, its cache key's
/// shape, and the values its route gives an `--upstream-path` template. The routes themselves are the app's
/// `ResourceTable`; a test holds its rows to this catalog.
package enum ResourceCatalog {
    /// The domain whose upstream serves each namespace.
    package static let domains: [String: UpstreamDomain] = [
        "health.today": .health, "health.averages": .health, "health.metrics": .health, "wellness": .health,
        "scores": .health, "activities": .activities, "streams": .activities, "subscription": .subscription,
        "profile": .progress, "progress.history": .progress, "progress.streak": .progress, "progress.today": .progress,
        "progress.any": .progress,
    ]

    /// The values each namespace's route gives an `--upstream-path` template (CONTRACT §11.2): `{user}` and the
    /// parameters its row resolves (a test holds the two together).
    package static let placeholders: [String: Set<String>] = [
        "health.today": ["user", "tz", "date"],
        "health.averages": ["user", "weekday", "tz"],
        "health.metrics": ["user", "metric", "date"],
        "wellness": ["user", "days"],
        "scores": ["user", "date"],
        "activities": ["user", "days", "types"],
        "streams": ["user", "id"],
        "subscription": ["user"],
        "profile": ["user"],
        "progress.history": ["user"],
        "progress.streak": ["user"],
        "progress.today": ["user", "tz", "date"],
        "progress.any": ["user"],
    ]

    /// Each namespace's key as docs/routes.md writes it (a test holds it to the keys the rows make).
    package static let keyShapes: [String: String] = [
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
    package static let metrics = ["hrv", "rhr", "sleep"]

    /// The placeholders of a namespace's key, in order (`["user", "types", "days"]` for `activities`).
    package static func keyPlaceholders(_ namespace: String) -> [String] {
        guard let shape = keyShapes[namespace] else { return [] }
        return shape.split(separator: ":").compactMap { part in
            part.hasPrefix("{") && part.hasSuffix("}") ? String(part.dropFirst().dropLast()) : nil
        }
    }

    /// The key placeholders a template for `namespace` leaves out, as `{name}`. A key's `{date}` on a route with
    /// `{tz}` is the date in that zone: a template naming `{tz}` decides it too.
    package static func keyPlaceholdersMissing(from template: UpstreamPathTemplate, namespace: String) -> [String] {
        let available = placeholders[namespace] ?? []
        let named = { (name: String) in template.text.contains("{\(name)}") }
        return keyPlaceholders(namespace).compactMap { name in
            if named(name) { return nil }
            if name == "date", available.contains("tz") { return named("tz") ? nil : "{date} (or {tz}, which decides it)" }
            return "{\(name)}"
        }
    }
}
