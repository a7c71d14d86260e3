import Access
import Prometheus

extension ServiceMetrics {
    static var authRequests: MetricNameDescriptor {
        family("unicache_auth_requests_total", "User-data and admin requests by access decision: allowed, or the denial reason (missing, invalid, expired, forbidden, protected).")
    }

    /// Brings `unicache_auth_requests_total{result}` up to the access counters (every result present).
    func carry(_ snapshot: AccessSnapshot?) {
        let results = [("allowed", snapshot?.allowed ?? 0)]
            + DenialReason.allCases.map { ($0.rawValue, snapshot?.denied[$0] ?? 0) }
        exported.withLockedValue { exported in
            for (result, total) in results {
                let counter = registry.makeCounter(descriptor: Self.authRequests, labels: [("result", result)])
                carry(total, into: counter, id: "auth\u{0}\(result)", exported: &exported)
            }
        }
    }
}
