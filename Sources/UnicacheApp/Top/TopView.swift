import Clocks
import Foundation

/// The text of one `unicache top` frame (varnishstat's model): a rate per second over the last interval beside the
/// total since start-up, for requests and cache results; the hit rate by tier; p50/p99 from the HTTP duration
/// histogram; each upstream's breaker, budget and refusals; the shared tier; access decisions; memory and disk.
/// A field the service does not have (a later version's, e.g. `shared.endpoint`) shows as `-`.
public struct TopView {
    public let url: String
    public let previous: TopSnapshot?
    public let current: TopSnapshot

    public init(url: String, previous: TopSnapshot?, current: TopSnapshot) {
        self.url = url
        self.previous = previous
        self.current = current
    }

    static let results = [("hit", "hits"), ("miss", "misses"), ("coalesced", "coalesced"), ("stale", "stale"), ("refresh", "refreshes")]
    static let http = "unicache_http_requests_total"
    static let duration = "unicache_http_request_duration_seconds"
    /// The operations routes top itself (and Prometheus) reads: left out of the request rate and latency.
    static let own = [#"route="/stats""#, #"route="/metrics""#]

    public func lines() -> [String] {
        var lines: [String] = []
        let seconds = previous.map { (current.at - $0.at).seconds }
        let uptime = current.number("uptimeSeconds").map { Self.duration(Int($0)) } ?? "-"
        lines.append("unicache top  \(url)  version \(current.text("version") ?? "-")  uptime \(uptime)"
            + "  interval \(seconds.map { String(format: "%.1fs", $0) } ?? "-")")
        lines.append("")
        lines.append(Self.row("", "per second", "total"))
        lines.append(Self.row(
            "requests (http)", rate { $0.metrics.total(Self.http, excluding: Self.own) },
            Self.count(current.metrics.total(Self.http, excluding: Self.own))))
        let readThrough = Self.results.map { "cache.\($0.1)" }
        lines.append(Self.row("read-through", rate { s in Self.sum(readThrough.map { s.number($0) }) },
                              Self.count(Self.sum(readThrough.map { current.number($0) }))))
        for (result, field) in Self.results {
            lines.append(Self.row("  " + result, rate { $0.number("cache.\(field)") }, Self.count(current.number("cache.\(field)"))))
        }
        lines.append(Self.row("hit rate", Self.percent(delta("cache.hits").flatMap { hits in
            delta(readThrough).flatMap { $0 > 0 ? hits / $0 : nil } }), Self.percent(current.number("cache.hitRate"))))
        lines.append(Self.row("latency p50 / p99", latency(interval: true), latency(interval: false)))
        lines.append(Self.row("hits by tier", "last interval", "since start"))
        for tier in ["memory", "disk", "shared"] {
            let interval = delta("cache.hitsByTier.\(tier)").flatMap { hits in delta(readThrough).flatMap { $0 > 0 ? hits / $0 : nil } }
            let total = current.number("cache.hitsByTier.\(tier)").flatMap { hits in
                Self.sum(readThrough.map { current.number($0) }).flatMap { $0 > 0 ? hits / $0 : nil } }
            lines.append(Self.row("  " + tier, Self.percent(interval), Self.percent(total)))
        }
        lines.append("")
        lines += upstreams()
        lines.append("")
        lines += tiersAndAccess()
        return lines
    }

    private func upstreams() -> [String] {
        var lines = [Self.columns(["upstream", "circuit", "budget left", "in flight", "rejected rate/paused/circuit"], widths: [14, 11, 13, 11])]
        for domain in current.keys("upstream.domains") {
            let base = "upstream.domains.\(domain)"
            let rejected = ["rate", "paused", "circuit"].map { current.text("\(base).rejected.\($0)") ?? "-" }.joined(separator: "/")
            lines.append(Self.columns([
                domain, current.text("\(base).circuit") ?? "-", current.text("\(base).budgetRemaining") ?? "-",
                current.text("\(base).inFlight") ?? "-", rejected,
            ], widths: [14, 11, 13, 11]))
        }
        lines.append("upstream fetches \(current.text("upstream.fetches") ?? "-") (\(rate { $0.number("upstream.fetches") })/s)"
            + "  failures \(current.text("upstream.failures") ?? "-")"
            + "  p50 \(Self.milliseconds(current.number("upstream.latencyMs.p50")))"
            + "  p99 \(Self.milliseconds(current.number("upstream.latencyMs.p99")))")
        return lines
    }

    private func tiersAndAccess() -> [String] {
        let denied = ["missing", "invalid", "expired", "forbidden", "protected"]
            .map { "\($0) \(current.text("auth.denied.\($0)") ?? "-")" }.joined(separator: " ")
        return [
            "shared   enabled \(Self.flag(current.bool("shared.enabled")))  connected \(Self.flag(current.bool("shared.connected")))"
                + "  endpoint \(current.text("shared.endpoint") ?? "-")  failovers \(current.text("shared.failovers") ?? "-")"
                + "  hits \(current.text("shared.hits") ?? "-")  misses \(current.text("shared.misses") ?? "-")"
                + "  errors \(current.text("shared.errors") ?? "-")",
            "auth     mode \(current.text("auth.mode") ?? "-")  allowed \(current.text("auth.allowed") ?? "-")"
                + " (\(rate { $0.number("auth.allowed") })/s)  denied: \(denied)"
                + "  keys \(current.text("auth.keys") ?? "-")  key errors \(current.text("auth.keyErrors") ?? "-")",
            "memory   \(Self.bytes(current.number("memory.bytes"))) of \(Self.bytes(current.number("memory.limitBytes")))"
                + "  entries \(current.text("memory.entries") ?? "-")  evictions \(current.text("memory.evictions") ?? "-")",
            "disk     \(Self.bytes(current.number("disk.bytes"))) of \(Self.bytes(current.number("disk.limitBytes")))"
                + "  entries \(current.text("disk.entries") ?? "-")  evictions \(current.text("disk.evictions") ?? "-")"
                + "  write errors \(current.text("disk.writeErrors") ?? "-")  undecryptable \(current.text("disk.undecryptable") ?? "-")",
        ]
    }

    /// A figure's change per second since the previous snapshot, formatted; `-` on the first frame.
    private func rate(_ figure: (TopSnapshot) -> Double?) -> String {
        guard let previous, let now = figure(current), let then = figure(previous) else { return "-" }
        let seconds = (current.at - previous.at).seconds
        guard seconds > 0 else { return "-" }
        return String(format: "%.1f", max(0, now - then) / seconds)
    }

    private func delta(_ path: String) -> Double? { delta([path]) }

    private func delta(_ paths: [String]) -> Double? {
        guard let previous, let now = Self.sum(paths.map { current.number($0) }),
              let then = Self.sum(paths.map { previous.number($0) }) else { return nil }
        return max(0, now - then)
    }

    /// p50 / p99 of the HTTP request durations: over the last interval, or since start-up.
    private func latency(interval: Bool) -> String {
        if interval && previous == nil { return "-" }
        let now = current.metrics.buckets(Self.duration, excluding: Self.own)
        let then = interval ? previous?.metrics.buckets(Self.duration, excluding: Self.own) : nil
        let p50 = MetricsText.quantile(0.5, of: now, since: then)
        let p99 = MetricsText.quantile(0.99, of: now, since: then)
        guard p50 != nil || p99 != nil else { return "-" }
        return "\(Self.milliseconds(p50.map { $0 * 1000 })) / \(Self.milliseconds(p99.map { $0 * 1000 }))"
    }

    // MARK: formatting

    static func sum(_ values: [Double?]) -> Double? {
        let present = values.compactMap { $0 }
        return present.isEmpty ? nil : present.reduce(0, +)
    }

    static func row(_ label: String, _ interval: String, _ total: String) -> String {
        label.padding(toLength: 22, withPad: " ", startingAt: 0) + pad(interval, 20) + pad(total, 20)
    }

    static func columns(_ values: [String], widths: [Int]) -> String {
        var line = ""
        for (index, value) in values.enumerated() {
            line += index < widths.count ? value.padding(toLength: widths[index], withPad: " ", startingAt: 0) : value
        }
        return line
    }

    static func pad(_ text: String, _ width: Int) -> String {
        String(repeating: " ", count: max(0, width - text.count)) + text
    }

    public static func count(_ value: Double?) -> String {
        guard let value else { return "-" }
        return value == value.rounded() && abs(value) < 1e15 ? String(Int(value)) : String(format: "%.2f", value)
    }

    static func percent(_ ratio: Double?) -> String { ratio.map { String(format: "%.1f%%", $0 * 100) } ?? "-" }

    static func milliseconds(_ value: Double?) -> String { value.map { String(format: "%.2f ms", $0) } ?? "-" }

    static func flag(_ value: Bool?) -> String { value.map { $0 ? "yes" : "no" } ?? "-" }

    static func bytes(_ value: Double?) -> String {
        guard let value else { return "-" }
        let units = ["B", "KiB", "MiB", "GiB", "TiB"]
        var scaled = value
        var unit = 0
        while scaled >= 1024, unit < units.count - 1 {
            scaled /= 1024
            unit += 1
        }
        return unit == 0 ? "\(Int(scaled)) B" : String(format: "%.1f", scaled) + " " + units[unit]
    }

    static func duration(_ seconds: Int) -> String {
        String(format: "%dh%02dm%02ds", seconds / 3600, seconds / 60 % 60, seconds % 60)
    }
}
