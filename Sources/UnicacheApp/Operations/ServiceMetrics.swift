import Clocks
import Foundation
import NIOConcurrencyHelpers
import Prometheus
import Settings
import UnifiedCache
import UpstreamGate

/// The Prometheus side of /stats and /metrics, on swift-prometheus's registry.
///
/// Metrics are registered through the registry's descriptors rather than the swift-metrics factory because
/// the factory registers every family with an empty help text, and `promtool check metrics` rejects families
/// without `# HELP`. HTTP requests and upstream fetch times are recorded as they happen; the cache's exact
/// counters live in `UnifiedCacheManager`'s statistics and are carried into Prometheus counters at each scrape.
final class ServiceMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    // NIOLockedValueBox rather than Synchronization.Mutex: ThreadSanitizer on Linux sees pthread locks only.
    private let httpMetrics = NIOLockedValueBox<[HTTPMetrics]>([])
    /// What the cache counters already carried into Prometheus, per family, namespace and result.
    let exported = NIOLockedValueBox<[String: Int]>([:])

    /// One route template's and status's pair of metrics. There are a few dozen pairs at most (the routes times the
    /// statuses each answers), so `recordRequest` scans them, status first, where a dictionary hashed its key on
    /// every request; a template is compared by its bytes only when the status matches, and at once when it is the
    /// same string (the router hands over its stored template).
    struct HTTPMetrics {
        let route: String
        let status: Int
        let count: Counter
        let duration: ValueHistogram
    }

    /// In seconds. Durations are recorded as `Double` seconds, not as `Duration`: the histogram compares the value
    /// with every bucket on each request, and twelve `Double` comparisons cost a fraction of twelve `Duration` ones
    /// (the exposition is the same text, `le="0.001"` … `le="10.0"`).
    static let durationBuckets: [Double] = [0.001, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10]

    /// A family's name and help (the exposition's `# HELP`); no family here has a unit suffix of its own.
    static func family(_ name: String, _ help: String) -> MetricNameDescriptor {
        MetricNameDescriptor(metricName: name, unitName: "", helpText: help)
    }

    static var httpRequests: MetricNameDescriptor {
        family("unicache_http_requests_total", "HTTP requests answered, by route template and status.")
    }
    static var httpDuration: MetricNameDescriptor {
        family("unicache_http_request_duration_seconds", "Time from a complete request to its response, by route template and status.")
    }
    static var cacheRequests: MetricNameDescriptor {
        family("unicache_cache_requests_total", "Read-through requests by namespace and how they were served (hit, miss, coalesced, stale, refresh).")
    }
    static var admissions: MetricNameDescriptor {
        family("unicache_tier_admissions_total", "Entries a tier's eviction policy let into its main region (admitted) or its frequency sketch turned away (rejected).")
    }

    static var evictions: MetricNameDescriptor {
        family("unicache_cache_evictions_total", "Entries removed from a tier to keep its budget.")
    }
    static var entries: MetricNameDescriptor {
        family("unicache_cache_entries", "Entries stored, by tier.")
    }
    static var bytes: MetricNameDescriptor {
        family("unicache_cache_bytes", "Bytes stored, by tier.")
    }
    static var upstreamRejected: MetricNameDescriptor {
        family("unicache_upstream_rejected_total", "Fetches the upstream gate kept from an upstream, by domain and reason (rate, paused, circuit, user).")
    }
    static var refreshThrottled: MetricNameDescriptor {
        family("unicache_upstream_refresh_throttled_total", "Forced refreshes answered from a copy fetched within --refresh-interval instead of the upstream, by domain.")
    }
    static var circuitOpen: MetricNameDescriptor {
        family("unicache_upstream_circuit_open", "1 while a domain's circuit is open or half-open, else 0.")
    }
    static var fetchSeconds: MetricNameDescriptor {
        family("unicache_upstream_fetch_seconds", "Duration of upstream fetches, by domain.")
    }

    static var sharedConnected: MetricNameDescriptor {
        family("unicache_shared_connected", "1 while the shared Redis tier is reachable and its invalidation channel subscribed, else 0.")
    }

    static var sharedOperations: MetricNameDescriptor {
        family("unicache_shared_operations_total", "Commands sent to the shared Redis tier, by operation and result.")
    }

    static var sharedReplayed: MetricNameDescriptor {
        family("unicache_shared_replayed_total", "Other instances' changes applied from the fleet's invalidation log after a lost connection or a restart.")
    }

    static var sharedFailovers: MetricNameDescriptor {
        family("unicache_shared_failovers_total", "Primary switches of the shared Redis tier followed (Sentinel failovers).")
    }

    static var sharedRedirects: MetricNameDescriptor {
        family("unicache_shared_redirects_total", "Redis Cluster redirections followed (--redis-cluster), by kind: moved (the slot map updated) or ask (a slot being migrated).")
    }

    static var sharedResets: MetricNameDescriptor {
        family("unicache_shared_resets_total", "Times the local tiers were dropped because the fleet's invalidation log could not vouch for what was missed.")
    }

    static var undecryptable: MetricNameDescriptor {
        family("unicache_undecryptable_total", "Sealed entries that did not open (removed key, edited, moved, another fleet's key) and were deleted, by tier.")
    }

    init() {}

    /// One answered HTTP request (`route` is the template, never the raw path).
    func recordRequest(route: String, status: Int, duration: Duration) {
        let seconds = duration.seconds
        httpMetrics.withLockedValue { all in
            let index = all.firstIndex { $0.status == status && $0.route == route } ?? all.endIndex
            if index == all.endIndex {
                let labels = [("route", route), ("status", String(status))]
                all.append(HTTPMetrics(
                    route: route, status: status,
                    count: registry.makeCounter(descriptor: Self.httpRequests, labels: labels),
                    duration: registry.makeValueHistogram(
                        descriptor: Self.httpDuration, labels: labels, buckets: Self.durationBuckets)))
            }
            // Recorded under the lock (a counter's atomic add and the histogram's own lock): nothing is copied out.
            all[index].count.increment()
            all[index].duration.record(seconds)
        }
    }

    /// The histogram every upstream fetch of `domain` records into.
    func upstreamHistogram(domain: String) -> ValueHistogram {
        registry.makeValueHistogram(
            descriptor: Self.fetchSeconds, labels: [("domain", domain)], buckets: Self.durationBuckets)
    }

    /// The Prometheus text exposition, with the cache's and the upstream gates' counters and gauges brought up to
    /// date first.
    func exposition(
        _ statistics: CacheStatistics, gates: [(domain: UpstreamDomain, snapshot: UpstreamGateSnapshot)] = []
    ) -> [UInt8] {
        exported.withLockedValue { exported in
            for (domain, snapshot) in gates {
                for reason in UpstreamRefusal.Reason.allCases {
                    let counter = registry.makeCounter(
                        descriptor: Self.upstreamRejected, labels: [("domain", domain.rawValue), ("reason", reason.rawValue)])
                    carry(
                        snapshot.rejected[reason, default: 0], into: counter,
                        id: "rejected\u{0}\(domain.rawValue)\u{0}\(reason.rawValue)", exported: &exported)
                }
                carry(
                    snapshot.refreshThrottled,
                    into: registry.makeCounter(descriptor: Self.refreshThrottled, labels: [("domain", domain.rawValue)]),
                    id: "throttled\u{0}\(domain.rawValue)", exported: &exported)
            }
            for (namespace, counters) in statistics.namespaces {
                let results = [
                    ("hit", counters.hits), ("miss", counters.misses), ("coalesced", counters.coalesced),
                    ("stale", counters.stale), ("refresh", counters.refreshes),
                ]
                for (result, total) in results {
                    let counter = registry.makeCounter(
                        descriptor: Self.cacheRequests, labels: [("namespace", namespace), ("result", result)])
                    carry(total, into: counter, id: "requests\u{0}\(namespace)\u{0}\(result)", exported: &exported)
                }
            }
            for (operation, total) in statistics.shared?.operations ?? [:] {
                let counter = registry.makeCounter(
                    descriptor: Self.sharedOperations,
                    labels: [("operation", operation.operation), ("result", operation.result)])
                carry(total, into: counter, id: "shared\u{0}\(operation.operation)\u{0}\(operation.result)", exported: &exported)
            }
            let perTier: [(MetricNameDescriptor, String, String, Int)] = [
                (Self.evictions, "evictions", "memory", statistics.memory.evictions),
                (Self.evictions, "evictions", "disk", statistics.secondTier?.evictions ?? 0),
                (Self.undecryptable, "undecryptable", "disk", statistics.secondTier?.undecryptable ?? 0),
                (Self.undecryptable, "undecryptable", "shared", statistics.shared?.undecryptable ?? 0),
            ]
            for (descriptor, family, tier, total) in perTier {
                let counter = registry.makeCounter(descriptor: descriptor, labels: [("tier", tier)])
                carry(total, into: counter, id: "\(family)\u{0}\(tier)", exported: &exported)
            }
            let decisions = [
                ("memory", statistics.memory.decisions), ("disk", statistics.secondTier?.decisions ?? EvictionStatistics()),
            ]
            let admissions = decisions.flatMap { tier, decided in
                [(tier, "admitted", decided.admitted), (tier, "rejected", decided.rejected)]
            }
            for (tier, result, total) in admissions {
                let counter = registry.makeCounter(descriptor: Self.admissions, labels: [("tier", tier), ("result", result)])
                carry(total, into: counter, id: "admissions\u{0}\(tier)\u{0}\(result)", exported: &exported)
            }
            if let shared = statistics.shared {
                for (descriptor, family, total) in [(Self.sharedReplayed, "replayed", shared.replayed), (Self.sharedResets, "resets", shared.resets), (Self.sharedFailovers, "failovers", shared.failovers)] {
                    carry(total, into: registry.makeCounter(descriptor: descriptor, labels: []), id: family, exported: &exported)
                }
                if let cluster = shared.cluster {
                    for (kind, total) in [("moved", cluster.moved), ("ask", cluster.ask)] {
                        let counter = registry.makeCounter(descriptor: Self.sharedRedirects, labels: [("kind", kind)])
                        carry(total, into: counter, id: "redirects\u{0}\(kind)", exported: &exported)
                    }
                }
            }
        }
        let tiers = [
            ("memory", statistics.memory.entries, statistics.memory.bytes),
            ("disk", statistics.secondTier?.entries ?? 0, statistics.secondTier?.bytes ?? 0),
        ]
        for (tier, entries, bytes) in tiers {
            registry.makeGauge(descriptor: Self.entries, labels: [("tier", tier)]).set(Double(entries))
            registry.makeGauge(descriptor: Self.bytes, labels: [("tier", tier)]).set(Double(bytes))
        }
        if let shared = statistics.shared {
            registry.makeGauge(descriptor: Self.sharedConnected, labels: []).set(shared.connected ? 1.0 : 0.0)
        }
        for (domain, snapshot) in gates {
            registry.makeGauge(descriptor: Self.circuitOpen, labels: [("domain", domain.rawValue)])
                .set(snapshot.circuit == .closed ? 0.0 : 1.0)
        }
        return registry.emitToBuffer()
    }

    /// Adds what `total` gained since the last scrape, so the counter equals the exact statistic.
    func carry(_ total: Int, into counter: Counter, id: String, exported: inout [String: Int]) {
        let delta = total - exported[id, default: 0]
        if delta > 0 { counter.increment(by: Int64(delta)) }
        exported[id] = max(total, exported[id, default: 0])
    }
}
