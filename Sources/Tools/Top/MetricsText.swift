/// The few figures `unicache top` reads from the Prometheus text exposition of `/metrics`: a family's samples summed
/// over their labels, and a histogram's cumulative buckets summed by `le`.
public struct MetricsText: Sendable {
    /// name → (labels text, value) for every sample line.
    private var samples: [String: [(labels: String, value: Double)]] = [:]

    public init(_ text: String) {
        for line in text.split(separator: "\n") where !line.hasPrefix("#") {
            guard let space = line.lastIndex(of: " "), let value = Double(line[line.index(after: space)...]) else { continue }
            let series = line[..<space]
            let name: Substring
            var labels: Substring = ""
            if let brace = series.firstIndex(of: "{") {
                name = series[..<brace]
                labels = series[brace...]
            } else {
                name = series
            }
            samples[String(name), default: []].append((String(labels), value))
        }
    }

    /// The sum of a family's samples, leaving out series whose labels contain any of `excluding` (e.g.
    /// `route="/stats"`); nil when it has none.
    public func total(_ name: String, excluding: [String] = []) -> Double? {
        samples[name].map { series in
            series.reduce(0) { sum, sample in excluding.contains { sample.labels.contains($0) } ? sum : sum + sample.value }
        }
    }

    /// A histogram's buckets (`NAME_bucket`) summed over every other label, leaving out series whose labels contain
    /// any of `excluding`: (upper bound, cumulative count), by bound.
    public func buckets(_ name: String, excluding: [String] = []) -> [(bound: Double, count: Double)] {
        var byBound: [Double: Double] = [:]
        for (labels, value) in samples[name + "_bucket"] ?? [] where !excluding.contains(where: { labels.contains($0) }) {
            guard let range = labels.range(of: "le=\"") else { continue }
            let rest = labels[range.upperBound...]
            guard let end = rest.firstIndex(of: "\"") else { continue }
            let text = rest[..<end]
            guard let bound = text == "+Inf" ? Double.infinity : Double(text) else { continue }
            byBound[bound, default: 0] += value
        }
        return byBound.sorted { $0.key < $1.key }.map { ($0.key, $0.value) }
    }

    /// The `q` quantile of the observations between two scrapes' buckets (`since` nil: all of them), interpolated
    /// within its bucket as PromQL's `histogram_quantile` does; nil without observations.
    package static func quantile(
        _ q: Double, of now: [(bound: Double, count: Double)], since then: [(bound: Double, count: Double)]?
    ) -> Double? {
        let before = Dictionary(then?.map { ($0.bound, $0.count) } ?? [], uniquingKeysWith: +)
        let counts = now.map { (bound: $0.bound, count: max(0, $0.count - (before[$0.bound] ?? 0))) }
        guard let total = counts.last?.count, total > 0 else { return nil }
        let rank = q * total
        var lowerBound = 0.0
        var lowerCount = 0.0
        for bucket in counts {
            if bucket.count >= rank {
                if bucket.bound.isInfinite { return lowerBound }
                let inBucket = bucket.count - lowerCount
                return inBucket <= 0 ? bucket.bound : lowerBound + (bucket.bound - lowerBound) * (rank - lowerCount) / inBucket
            }
            lowerBound = bucket.bound
            lowerCount = bucket.count
        }
        return lowerBound
    }
}
