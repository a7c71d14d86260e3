import CoreMetrics
import Foundation
import Prometheus
import Synchronization
import UnifiedCache

/// The Prometheus side of /stats and /metrics, built on swift-metrics with swift-prometheus's factory
/// (passed explicitly: no global `MetricsSystem.bootstrap`, so tests can build as many apps as they like).
///
/// HTTP requests and upstream fetch times are recorded as they happen; the cache's exact counters live in
/// `UnifiedCacheManager`'s statistics and are carried over into Prometheus counters at each scrape.
final class ServiceMetrics: Sendable {
    let registry = PrometheusCollectorRegistry()
    private let factory: PrometheusMetricsFactory
    private let httpCounters = Mutex<[HTTPKey: CoreMetrics.Counter]>([:])
    /// What the cache counters already carried into Prometheus, per namespace and result.
    private let exported = Mutex<[String: Int]>([:])

    struct HTTPKey: Hashable {
        var route: String
        var status: Int
    }

    init() {
        var factory = PrometheusMetricsFactory(registry: registry)
        factory.defaultDurationHistogramBuckets = [
            .milliseconds(1), .milliseconds(5), .milliseconds(10), .milliseconds(25), .milliseconds(50),
            .milliseconds(100), .milliseconds(250), .milliseconds(500), .seconds(1), .milliseconds(2500),
            .seconds(5), .seconds(10),
        ]
        self.factory = factory
    }

    /// One answered HTTP request (`route` is the template, never the raw path).
    func recordRequest(route: String, status: Int, duration: Duration) {
        let key = HTTPKey(route: route, status: status)
        let counter = httpCounters.withLock { counters in
            if let counter = counters[key] { return counter }
            let counter = CoreMetrics.Counter(
                label: "unicache_http_requests_total", dimensions: [("route", route), ("status", String(status))],
                factory: factory)
            counters[key] = counter
            return counter
        }
        counter.increment()
    }

    /// The timer every upstream fetch records into (`unicache_upstream_fetch_seconds`).
    func upstreamTimer(domain: String) -> CoreMetrics.Timer {
        CoreMetrics.Timer(label: "unicache_upstream_fetch_seconds", dimensions: [("domain", domain)], factory: factory)
    }

    /// The Prometheus text exposition, with the cache's counters and gauges brought up to date first.
    func exposition(_ statistics: CacheStatistics) -> [UInt8] {
        exported.withLock { exported in
            for (namespace, counters) in statistics.namespaces {
                let results = [
                    ("hit", counters.hits), ("miss", counters.misses), ("coalesced", counters.coalesced),
                    ("stale", counters.stale), ("refresh", counters.refreshes),
                ]
                for (result, total) in results {
                    let id = namespace + "\u{0}" + result
                    let delta = total - exported[id, default: 0]
                    guard delta > 0 else { continue }
                    CoreMetrics.Counter(
                        label: "unicache_cache_requests_total", dimensions: [("namespace", namespace), ("result", result)],
                        factory: factory
                    ).increment(by: delta)
                    exported[id] = total
                }
            }
            let evictions = [("memory", statistics.memory.evictions), ("disk", statistics.secondTier?.evictions ?? 0)]
            for (tier, total) in evictions {
                let id = "evictions\u{0}" + tier
                let delta = total - exported[id, default: 0]
                guard delta > 0 else { continue }
                CoreMetrics.Counter(label: "unicache_cache_evictions_total", dimensions: [("tier", tier)], factory: factory)
                    .increment(by: delta)
                exported[id] = total
            }
        }
        let tiers = [
            ("memory", statistics.memory.entries, statistics.memory.bytes),
            ("disk", statistics.secondTier?.entries ?? 0, statistics.secondTier?.bytes ?? 0),
        ]
        for (tier, entries, bytes) in tiers {
            CoreMetrics.Gauge(label: "unicache_cache_entries", dimensions: [("tier", tier)], factory: factory)
                .record(entries)
            CoreMetrics.Gauge(label: "unicache_cache_bytes", dimensions: [("tier", tier)], factory: factory)
                .record(bytes)
        }
        return registry.emitToBuffer()
    }
}
