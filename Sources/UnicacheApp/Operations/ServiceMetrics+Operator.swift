import Access
import Prometheus
import Settings
import UnifiedCache
import UpstreamGate

/// The families the alert rules and the dashboard (deploy/alerts.yml, deploy/grafana/unicache.json) need beyond
/// the contract's: disk write errors, the JWKS's health, each budget's fill and the tiers' byte limits. Like the
/// others, brought up to date at each scrape from the exact statistics.
extension ServiceMetrics {
    static var diskWriteErrors: MetricNameDescriptor {
        family("unicache_disk_write_errors_total", "Disk tier writes that failed (full, read-only or I/O error); /stats disk.writeErrors.")
    }
    static var authKeyErrors: MetricNameDescriptor {
        family("unicache_auth_key_errors_total", "JWKS fetches or reads that failed (the last good keys were kept); /stats auth.keyErrors.")
    }
    static var authKeyRefreshes: MetricNameDescriptor {
        family("unicache_auth_key_refreshes_total", "JWKS fetches or reads that succeeded; /stats auth.keyRefreshes.")
    }
    static var authKeys: MetricNameDescriptor {
        family("unicache_auth_keys", "Usable JWT verification keys held; /stats auth.keys.")
    }
    static var budgetRemaining: MetricNameDescriptor {
        family("unicache_upstream_budget_remaining", "Requests a domain's --upstream-rate budget still allows now (the fewest over its windows); only domains with a budget.")
    }
    static var budgetLimit: MetricNameDescriptor {
        family("unicache_upstream_budget_limit", "Requests a domain's --upstream-rate budget allows per window (its first window's); only domains with a budget.")
    }
    static var tierHits: MetricNameDescriptor {
        family("unicache_cache_tier_hits_total", "Read-through hits by the tier that answered them (memory, disk, shared); their sum is the hit result of unicache_cache_requests_total.")
    }
    static var limitBytes: MetricNameDescriptor {
        family("unicache_cache_limit_bytes", "Byte budget of a tier (memory, disk).")
    }

    /// The JWKS's families (every mode shows them: zeros without `--auth jwt`).
    func carryKeys(_ snapshot: AccessSnapshot?) {
        registry.makeGauge(descriptor: Self.authKeys, labels: []).set(Double(snapshot?.keys ?? 0))
        exported.withLockedValue { exported in
            carry(snapshot?.keyErrors ?? 0, into: registry.makeCounter(descriptor: Self.authKeyErrors, labels: []),
                  id: "keyErrors", exported: &exported)
            carry(snapshot?.keyRefreshes ?? 0, into: registry.makeCounter(descriptor: Self.authKeyRefreshes, labels: []),
                  id: "keyRefreshes", exported: &exported)
        }
    }

    /// Disk write errors, the tiers' limits and the budgets of the domains that have one.
    func carryOperator(
        _ statistics: CacheStatistics, gates: [(domain: UpstreamDomain, snapshot: UpstreamGateSnapshot)]
    ) {
        exported.withLockedValue { exported in
            let tiers = statistics.hitsByTier
            for (tier, total) in [("memory", tiers.memory), ("disk", tiers.disk), ("shared", tiers.shared)] {
                carry(total, into: registry.makeCounter(descriptor: Self.tierHits, labels: [("tier", tier)]),
                      id: "tierHits\u{0}\(tier)", exported: &exported)
            }
            carry(statistics.secondTier?.writeErrors ?? 0,
                  into: registry.makeCounter(descriptor: Self.diskWriteErrors, labels: []),
                  id: "diskWriteErrors", exported: &exported)
        }
        registry.makeGauge(descriptor: Self.limitBytes, labels: [("tier", "memory")])
            .set(Double(statistics.memory.limitBytes))
        registry.makeGauge(descriptor: Self.limitBytes, labels: [("tier", "disk")])
            .set(Double(statistics.secondTier?.limitBytes ?? 0))
        for (domain, snapshot) in gates {
            guard let remaining = snapshot.budgetRemaining, let limit = snapshot.budgetLimit else { continue }
            registry.makeGauge(descriptor: Self.budgetRemaining, labels: [("domain", domain.rawValue)]).set(Double(remaining))
            registry.makeGauge(descriptor: Self.budgetLimit, labels: [("domain", domain.rawValue)]).set(Double(limit))
        }
    }
}
