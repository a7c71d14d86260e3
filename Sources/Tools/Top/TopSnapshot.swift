import Foundation

/// One reading of a running service for `unicache top`: its `/stats` document, its `/metrics` exposition and when
/// they were read (a reading of the command's monotonic clock: only the span between two readings matters). Fields
/// are looked up by their dotted `/stats` names; one the service does not have (yet) is nil, and shown as `-`.
public struct TopSnapshot {
    public let stats: [String: Any]
    public let metrics: MetricsText
    public let at: Duration

    public init(stats: [String: Any], metrics: MetricsText, at: Duration) {
        self.stats = stats
        self.metrics = metrics
        self.at = at
    }

    /// Parses `/stats` JSON; nil when it is not a JSON object.
    public init?(statsJSON: [UInt8], metricsText: String, at: Duration) {
        guard let object = try? JSONSerialization.jsonObject(with: Data(statsJSON)) as? [String: Any] else { return nil }
        self.init(stats: object, metrics: MetricsText(metricsText), at: at)
    }

    /// Whether `stats` is a unicache `/stats` document: its `cache` counters and its uptime (every release has them).
    package var isUnicacheStats: Bool {
        number("cache.hits") != nil && number("cache.misses") != nil && number("uptimeSeconds") != nil
    }

    public func value(_ path: String) -> Any? {
        var current: Any? = stats
        for part in path.split(separator: ".") {
            guard let object = current as? [String: Any] else { return nil }
            current = object[String(part)]
        }
        if current is NSNull { return nil }
        return current
    }

    public func number(_ path: String) -> Double? {
        switch value(path) {
        case let int as Int: Double(int)
        case let double as Double: double
        case let number as NSNumber: number.doubleValue
        default: nil
        }
    }

    public func bool(_ path: String) -> Bool? { value(path) as? Bool }

    /// A string field as it is; a number as a count.
    public func text(_ path: String) -> String? {
        if let text = value(path) as? String { return text }
        return number(path).map(TopView.count)
    }

    /// Keys of the object at `path`, sorted.
    public func keys(_ path: String) -> [String] { ((value(path) as? [String: Any])?.keys).map { $0.sorted() } ?? [] }
}
