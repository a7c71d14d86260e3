/// A group of resources served by one fetcher (CONTRACT §3's domain column).
public enum UpstreamDomain: String, Sendable, CaseIterable, Hashable {
    case health, activities, subscription, progress

    /// `UNICACHE_UPSTREAM_<DOMAIN>`.
    public var environmentName: String { "UNICACHE_UPSTREAM_\(rawValue.uppercased())" }
}

/// Where each domain fetches from and how long it may take.
public struct UpstreamSettings: Sendable, Equatable {
    /// Base URL per domain (`http(s)://host[:port][/path]`, no trailing `/`); a domain without one uses its demo fetcher.
    public var urls: [UpstreamDomain: String]
    /// Per upstream request (`--upstream-timeout`).
    public var timeout: Duration
    /// Simulated latency of the demo fetchers (`--demo-latency`).
    public var demoLatency: Duration
    /// Budgets, caps on requests in flight and service headers per domain (CONTRACT §7); a domain not listed
    /// has no budget, the default cap and no headers.
    public var protection: [UpstreamDomain: UpstreamProtection]

    public init(
        urls: [UpstreamDomain: String] = [:],
        timeout: Duration = .seconds(5),
        demoLatency: Duration = .milliseconds(200),
        protection: [UpstreamDomain: UpstreamProtection] = [:]
    ) {
        self.urls = urls
        self.timeout = timeout
        self.demoLatency = demoLatency
        self.protection = protection
    }

    /// How `domain`'s upstream is protected.
    public func protection(for domain: UpstreamDomain) -> UpstreamProtection {
        protection[domain] ?? UpstreamProtection()
    }

    /// The upstream base URL of `domain`, or `nil` when it uses its demo fetcher.
    public func url(for domain: UpstreamDomain) -> String? { urls[domain] }
}
