/// Fetch latency: a fixed histogram of every fetch plus a reservoir of the most recent ones for percentiles.
struct LatencyRecorder: Sendable {
    static let reservoirSize = 1024
    /// Upper bounds in seconds (Prometheus' default buckets).
    static let bucketBounds: [Double] = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    private var recent: [Double] = []
    private var nextSlot = 0
    /// Per bucket (not cumulative), the last one is +Inf.
    private var buckets = [Int](repeating: 0, count: LatencyRecorder.bucketBounds.count + 1)
    private var sumSeconds = 0.0

    mutating func record(seconds: Double) {
        let value = max(0, seconds)
        if recent.count < Self.reservoirSize {
            recent.append(value)
        } else {
            recent[nextSlot] = value
        }
        nextSlot = (nextSlot + 1) % Self.reservoirSize
        let bucket = Self.bucketBounds.firstIndex { value <= $0 } ?? Self.bucketBounds.count
        buckets[bucket] += 1
        sumSeconds += value
    }

    func statistics() -> UpstreamStatistics {
        var result = UpstreamStatistics()
        let sorted = recent.sorted()
        result.latencyP50Ms = Self.percentile(0.50, of: sorted) * 1000
        result.latencyP90Ms = Self.percentile(0.90, of: sorted) * 1000
        result.latencyP99Ms = Self.percentile(0.99, of: sorted) * 1000
        var cumulative = 0
        result.latencyBucketCounts = buckets.map { count in
            cumulative += count
            return cumulative
        }
        result.latencySumSeconds = sumSeconds
        return result
    }

    /// Nearest-rank percentile of sorted values; 0 when empty.
    static func percentile(_ p: Double, of sorted: [Double]) -> Double {
        guard !sorted.isEmpty else { return 0 }
        let rank = Int((p * Double(sorted.count)).rounded(.up))
        return sorted[min(max(rank, 1), sorted.count) - 1]
    }
}
