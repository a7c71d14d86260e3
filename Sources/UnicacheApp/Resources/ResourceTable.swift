import Settings
import Foundation
import UnifiedCache

/// The read-through resources of CONTRACT §3, one row each. Adding a resource is adding a row.
enum ResourceTable {
    static func minutes(_ count: Int64) -> Duration { .seconds(count * 60) }
    static func hours(_ count: Int64) -> Duration { .seconds(count * 3600) }
    static func days(_ count: Int64) -> Duration { .seconds(count * 86_400) }

    static let rows: [Resource] = [
        Resource(path: "/health/today", domain: .health, namespace: "health.today") { c throws(InputError) in
            let tz = try c.timeZone()
            let date = LocalDate(c.now, in: tz.zone)
            return c.resolved(
                "health.today", key: "health:today:\(c.user):\(date)", suffix: "/health/today",
                query: [QueryItem("tz", tz.name)], parameters: ["tz": tz.name, "date": "\(date)"],
                policy: .todayTimestamp(timeZone: tz.zone, maxTTL: c.ttl.span("health.today", default: minutes(15))))
        },
        Resource(path: "/health/averages/{weekday}", domain: .health, namespace: "health.averages") { c throws(InputError) in
            try averages(c, weekday: InputValidation.weekday(c.path("weekday")))
        },
        Resource(path: "/health/metrics/{metric}/{date}", domain: .health, namespace: "health.metrics") { c throws(InputError) in
            let metric = c.path("metric")
            guard ResourceCatalog.metrics.contains(metric) else {
                throw InputError(parameter: "metric", expected: "one of hrv, rhr, sleep")
            }
            let date = try InputValidation.date(c.path("date"))
            let tz = try c.timeZone()
            let isPast = date < LocalDate(c.now, in: tz.zone)
            let ttl = c.ttl.override("health.metrics") ?? (isPast ? days(1) : minutes(5))
            return c.resolved(
                "health.metrics", key: "health:\(metric):\(c.user):\(date)", suffix: "/health/metrics/\(metric)/\(date)",
                parameters: ["metric": metric, "date": "\(date)"], policy: .ttl(ttl))
        },
        Resource(path: "/wellness", domain: .health, namespace: "wellness") { c throws(InputError) in
            let days = try InputValidation.integer(c.query("days"), name: "days", range: 1...90, default: 30)
            return c.resolved(
                "wellness", key: "wellness:\(c.user):\(days)", suffix: "/wellness", query: [QueryItem("days", "\(days)")],
                parameters: ["days": "\(days)"], policy: .ttl(c.ttl.span("wellness", default: minutes(10))))
        },
        Resource(path: "/scores/{date}", domain: .health, namespace: "scores") { c throws(InputError) in
            let date = try InputValidation.date(c.path("date"))
            return c.resolved(
                "scores", key: "scores:\(c.user):\(date)", suffix: "/scores/\(date)", parameters: ["date": "\(date)"],
                policy: .ttl(c.ttl.span("scores", default: hours(1))))
        },
        Resource(path: "/activities", domain: .activities, namespace: "activities") { c throws(InputError) in
            let days = try InputValidation.integer(c.query("days"), name: "days", range: 1...365, default: 30)
            let types = try InputValidation.activityTypes(c.query("types")).joined(separator: ",")
            var query = [QueryItem("days", "\(days)")]
            if !types.isEmpty { query.append(QueryItem("types", types)) }
            return c.resolved(
                "activities", key: "activities:\(c.user):\(types):\(days)", suffix: "/activities", query: query,
                parameters: ["days": "\(days)", "types": types],
                policy: .ttl(c.ttl.span("activities", default: minutes(5))))
        },
        Resource(path: "/activities/{id}/streams", domain: .activities, namespace: "streams") { c throws(InputError) in
            let id = try InputValidation.identifier(c.path("id"), name: "id")
            return c.resolved(
                "streams", key: "streams:\(c.user):\(id)", suffix: "/activities/\(id)/streams", parameters: ["id": id],
                policy: .ttl(c.ttl.span("streams", default: days(7))))
        },
        simple("/subscription", .subscription, "subscription", key: "subscription", ttl: minutes(5)),
        simple("/profile", .progress, "profile", key: "profile", ttl: days(1)),
        simple("/progress/history", .progress, "progress.history", key: "progress:history", ttl: days(1)),
        simple("/progress/streak", .progress, "progress.streak", key: "progress:streak", ttl: hours(1)),
        Resource(path: "/progress/answered-today", domain: .progress, namespace: "progress.today") { c throws(InputError) in
            let tz = try c.timeZone()
            let date = LocalDate(c.now, in: tz.zone)
            let policy: FreshnessPolicy = c.ttl.override("progress.today").map { .ttl($0) } ?? .untilLocalMidnight(tz.zone)
            return c.resolved(
                "progress.today", key: "progress:today:\(c.user):\(date)", suffix: "/progress/answered-today",
                query: [QueryItem("tz", tz.name)], parameters: ["tz": tz.name, "date": "\(date)"], policy: policy)
        },
        Resource(path: "/progress/answered-any", domain: .progress, namespace: "progress.any") { c throws(InputError) in
            c.resolved(
                "progress.any", key: "progress:any:\(c.user)", suffix: "/progress/answered-any",
                policy: .permanentWhenTrue(field: "answered", ttlWhileFalse: c.ttl.span("progress.any", default: hours(1))))
        },
    ]

    /// `health.averages` for a weekday (1 = Sunday … 7 = Saturday); also used by the summary and warm-up.
    static func averages(_ c: ResourceContext, weekday: Int) throws(InputError) -> ResolvedResource {
        let tz = try c.timeZone()
        let refresh = RefreshAheadRule(timeZone: tz.zone, startHour: 6, endHour: 9, minimumAge: days(1), weekday: weekday)
        let policy = FreshnessPolicy.ttl(c.ttl.span("health.averages", default: days(30))).refreshingAhead(refresh)
        return c.resolved(
            "health.averages", key: "health:avg:\(c.user):\(weekday)", suffix: "/health/averages/\(weekday)",
            parameters: ["weekday": "\(weekday)", "tz": tz.name], policy: policy)
    }

    /// A per-user resource with a fixed TTL and no parameters.
    private static func simple(
        _ path: String, _ domain: UpstreamDomain, _ namespace: String, key: String, ttl: Duration
    ) -> Resource {
        Resource(path: path, domain: domain, namespace: namespace) { c throws(InputError) in
            c.resolved(
                namespace, key: "\(key):\(c.user)", suffix: path,
                policy: .ttl(c.ttl.span(namespace, default: ttl)))
        }
    }

    static let healthToday = rows[0]
}
