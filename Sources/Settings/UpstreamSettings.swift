import Foundation
import UpstreamGate

/// A group of resources served by one fetcher (CONTRACT §3's domain column).
public enum UpstreamDomain: String, Sendable, CaseIterable, Hashable {
    case health, activities, subscription, progress

    /// `UNICACHE_UPSTREAM_<DOMAIN>`.
    public var environmentName: String { "UNICACHE_UPSTREAM_\(rawValue.uppercased())" }
}

/// Where each domain fetches from and how long it may take.
public struct UpstreamSettings: Sendable, Equatable {
    /// Base URL per domain (`http(s)://host[:port][/path]`, no trailing `/`).
    public var urls: [UpstreamDomain: String]
    /// Per upstream request (`--upstream-timeout`).
    public var timeout: Duration
    /// Simulated latency of the demo fetchers (`--demo-latency`).
    public var demoLatency: Duration
    /// Budgets, caps on requests in flight and service headers per domain (CONTRACT §7); a domain not listed
    /// has no budget, the default cap and no headers.
    public var protection: [UpstreamDomain: UpstreamProtection]
    /// The domains the demo fetchers serve (`--demo`, CONTRACT §11.1); a domain with neither an upstream nor the
    /// demo answers its routes 503 `no-upstream`.
    public var demo: Set<UpstreamDomain>
    /// `--upstream-path` templates by namespace (CONTRACT §11.2).
    public var paths: [String: UpstreamPathTemplate]
    /// `--upstream-user-share` (CONTRACT §15.2): the percent of each budget window and of each cap one user may take.
    public var userShare = UserShare(percent: 10)

    public init(
        urls: [UpstreamDomain: String] = [:],
        timeout: Duration = .seconds(5),
        demoLatency: Duration = .milliseconds(200),
        protection: [UpstreamDomain: UpstreamProtection] = [:],
        demo: Set<UpstreamDomain>? = nil,
        paths: [String: UpstreamPathTemplate] = [:]
    ) {
        self.urls = urls
        self.timeout = timeout
        self.demoLatency = demoLatency
        self.protection = protection
        // `--demo`'s default: every domain without an upstream while none is given, no domain once one is.
        self.demo = demo ?? (urls.isEmpty ? Set(UpstreamDomain.allCases) : [])
        self.paths = paths
    }

    /// Where `domain` is served from.
    public func source(for domain: UpstreamDomain) -> UpstreamSource {
        if let url = urls[domain] { return .upstream(url) }
        return demo.contains(domain) ? .demo : .none
    }

    /// How `domain`'s upstream is protected.
    public func protection(for domain: UpstreamDomain) -> UpstreamProtection {
        protection[domain] ?? UpstreamProtection()
    }

    /// The upstream base URL of `domain`, or `nil` when it has none.
    public func url(for domain: UpstreamDomain) -> String? { urls[domain] }
}

/// What serves a domain's routes (CONTRACT §11.1).
public enum UpstreamSource: Sendable, Equatable, CustomStringConvertible {
    /// The deterministic demo fetcher (`--demo`).
    case demo
    /// A real HTTP upstream at this base URL (which may carry credentials: `description` never shows them).
    case upstream(String)
    /// Neither: the domain's routes answer 503 `no-upstream`.
    case none

    /// `demo`, `none`, or the upstream's scheme, host and port (`https://api.example:443`), never its credentials
    /// or path: what the start-up log and `/stats` `upstreams.DOMAIN.source` say.
    public var description: String {
        switch self {
        case .demo: return "demo"
        case .none: return "none"
        case .upstream(let url):
            guard let components = URLComponents(string: url), let scheme = components.scheme?.lowercased(),
                let host = components.host
            else { return "upstream" }
            let port = components.port ?? (scheme == "https" ? 443 : 80)
            let shownHost = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
            return "\(scheme)://\(shownHost):\(port)"
        }
    }
}
