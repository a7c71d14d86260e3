import Clocks
import Foundation

/// The text of one `unicache top` frame (varnishstat's model): a rate per second over the last interval beside the
/// total since start-up, for requests and cache results; the hit rate by tier; p50/p99 from the HTTP duration
/// histogram; each upstream's breaker, budget and refusals (one user's spent share among them); the shared tier (on a
/// Redis Cluster its nodes and the slots they cover); access decisions; memory and disk.
/// A field the service does not have (a later version's, e.g. `shared.endpoint`) shows as `-`. A frame fits an
/// 80×24 terminal (CONTRACT §11.6).
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

    /// The terminal a frame fits: every line at most `width` columns, at most `height` lines.
    public static let width = 80
    package static let height = 24

    /// The frame: at most `height` lines of at most `width` columns (anything longer is cut, with `…`).
    public func lines() -> [String] {
        var lines: [String] = []
        let seconds = previous.map { (current.at - $0.at).seconds }
        let uptime = current.number("uptimeSeconds").map { Self.duration(Int($0)) } ?? "-"
        lines.append("unicache top  \(url)  \(current.text("version") ?? "-")  up \(uptime)")
        lines.append(Self.row("every \(seconds.map { String(format: "%.1fs", $0) } ?? "-")", "per second", "total"))
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
        // The share of read-through requests each tier answered: memory/disk/shared, over the interval and since start.
        let tiers = ["memory", "disk", "shared"]
        let interval = tiers.map { tier in
            delta("cache.hitsByTier.\(tier)").flatMap { hits in delta(readThrough).flatMap { $0 > 0 ? hits / $0 : nil } }
        }
        let total = tiers.map { tier in
            current.number("cache.hitsByTier.\(tier)").flatMap { hits in
                Self.sum(readThrough.map { current.number($0) }).flatMap { $0 > 0 ? hits / $0 : nil } }
        }
        lines.append(Self.row("  memory/disk/shared", Self.percents(interval), Self.percents(total)))
        lines.append(Self.row("latency p50 / p99", latency(interval: true), latency(interval: false)))
        lines += upstreams()
        lines += tiersAndAccess()
        return Self.fit(lines)
    }

    private func upstreams() -> [String] {
        let widths = [13, 10, 12, 10]
        var lines = [Self.columns(["upstream", "circuit", "budget left", "in flight", "rejected rate/paused/circuit/user"], widths: widths)]
        for domain in current.keys("upstream.domains") {
            let base = "upstream.domains.\(domain)"
            let rejected = ["rate", "paused", "circuit", "user"].map { figure("\(base).rejected.\($0)") }.joined(separator: "/")
            lines.append(Self.columns([
                domain, figure("\(base).circuit"), figure("\(base).budgetRemaining"), figure("\(base).inFlight"), rejected,
            ], widths: widths))
        }
        lines.append("fetches \(figure("upstream.fetches")) (\(rate { $0.number("upstream.fetches") })/s)"
            + "  failures \(figure("upstream.failures"))"
            + "  p50 \(Self.milliseconds(current.number("upstream.latencyMs.p50")))"
            + "  p99 \(Self.milliseconds(current.number("upstream.latencyMs.p99")))")
        return lines
    }

    private func tiersAndAccess() -> [String] {
        let denied = ["missing", "invalid", "expired", "forbidden", "protected"]
            .map { "\($0) \(figure("auth.denied.\($0)"))" }.joined(separator: " ")
        let shared = current.bool("shared.enabled") == false
            ? "off" : current.bool("shared.connected").map { $0 ? "connected" : "unreachable" } ?? "-"
        let diskErrors = Self.sum(["writeErrors", "readErrors", "corrupt", "undecryptable"].map { current.number("disk.\($0)") })
        // A Redis Cluster fails over by itself (no Sentinel, `failovers` stays 0): its nodes and the slots whose
        // primary is up say more (16384 when whole, shown in full: one slot short matters; fewer while a shard has
        // lost its primary and has no replica to promote, its writes answering 503).
        let links = current.value("shared.cluster") == nil
            ? "failovers \(figure("shared.failovers"))"
            : "nodes \(figure("shared.cluster.nodes"))  slots \(Self.count(current.number("shared.cluster.slotsCovered")))"
        return [
            "shared   \(shared)  hits \(figure("shared.hits"))  misses \(figure("shared.misses"))"
                + "  errors \(figure("shared.errors"))  \(links)",
            "         endpoint \(figure("shared.endpoint"))",
            "auth     mode \(figure("auth.mode"))  allowed \(figure("auth.allowed")) (\(rate { $0.number("auth.allowed") })/s)"
                + "  keys \(figure("auth.keys"))  key errors \(figure("auth.keyErrors"))",
            "denied   \(denied)",
            "memory   \(Self.bytes(current.number("memory.bytes"))) of \(Self.bytes(current.number("memory.limitBytes")))"
                + "  entries \(figure("memory.entries"))  evictions \(figure("memory.evictions"))",
            // Errors: writes and reads that failed, files found corrupt or that did not open (/stats has each).
            "disk     \(Self.bytes(current.number("disk.bytes"))) of \(Self.bytes(current.number("disk.limitBytes")))"
                + "  entries \(figure("disk.entries"))  evictions \(figure("disk.evictions"))  errors \(Self.compact(diskErrors))",
        ]
    }

    /// A field as text: a string as it is, a number in at most about four characters (`1.2k`, `34M`), `-` if absent.
    private func figure(_ path: String) -> String {
        if let text = current.value(path) as? String { return text }
        return Self.compact(current.number(path))
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

    /// Several ratios as one figure, `50.0/16.7/0.0%`; `-` when none is known.
    static func percents(_ ratios: [Double?]) -> String {
        guard ratios.contains(where: { $0 != nil }) else { return "-" }
        return ratios.map { $0.map { String(format: "%.1f", $0 * 100) } ?? "-" }.joined(separator: "/") + "%"
    }

    /// A count in at most about four characters: `999`, `1.2k`, `34k`, `1.2M`; `-` for nil.
    static func compact(_ value: Double?) -> String {
        guard let value else { return "-" }
        for (scale, suffix) in [(1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k")] where abs(value) >= scale {
            let scaled = value / scale
            return (abs(scaled) < 10 ? String(format: "%.1f", scaled) : String(Int(scaled))) + suffix
        }
        return count(value)
    }

    /// At most `height` lines, each cut to `width` columns (its last kept character replaced by `…`).
    public static func fit(_ lines: [String]) -> [String] {
        lines.prefix(height).map { $0.count <= width ? $0 : String($0.prefix(width - 1)) + "…" }
    }

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
