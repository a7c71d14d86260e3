import Settings
import UnifiedCache
import UpstreamGate

/// One upstream gate per domain (CONTRACT §7), built from each domain's protection settings; demo fetchers
/// stand behind theirs too, so `make run` shows budgets and the circuit at work.
/// Builds a domain's budget counter from its windows and one user's share of them.
package typealias RateCounterFactory = @Sendable (UpstreamDomain, [RateWindow], UserShare) -> any UpstreamRateCounter

struct UpstreamGates: Sendable {
    private let gates: PerDomain<UpstreamGate>

    /// `slotWait`: how long a request waits for a slot under the concurrency cap (the request's deadline).
    /// `counter`: builds a domain's budget counter (the fleet's, with a shared tier); a local sliding log without.
    /// `userShare`: one user's share of each budget and cap (CONTRACT §15.2).
    init(
        protection: [UpstreamDomain: UpstreamProtection], slotWait: Duration, clock: any Clock<Duration>,
        counter: RateCounterFactory? = nil, userShare: UserShare = .whole
    ) {
        gates = PerDomain { domain in
            let settings = protection[domain] ?? UpstreamProtection()
            let windows = settings.budgets
            var configuration = UpstreamGate.Configuration(concurrency: settings.concurrency, slotWait: slotWait)
            configuration.userShare = userShare
            return UpstreamGate(
                configuration: configuration,
                budget: windows.isEmpty
                    ? nil : counter?(domain, windows, userShare) ?? SlidingWindowCounter(windows: windows, userShare: userShare),
                clock: clock)
        }
    }

    subscript(domain: UpstreamDomain) -> UpstreamGate { gates[domain] }

    /// Each domain's gate as `/stats` and `/metrics` show it.
    func snapshots() async -> [(domain: UpstreamDomain, snapshot: UpstreamGateSnapshot)] {
        var result: [(domain: UpstreamDomain, snapshot: UpstreamGateSnapshot)] = []
        for domain in UpstreamDomain.allCases { result.append((domain, await gates[domain].snapshot())) }
        return result
    }
}
