import Foundation
import Healthcheck

/// Where `unicache top` reads a running service: `GET /stats` (JSON) and `GET /metrics`, over the healthcheck's
/// small socket client (plain HTTP).
public struct TopSource: Sendable {
    public let url: String
    let host: String
    let port: Int
    let timeout: Duration

    /// `url`: `http://HOST[:PORT][/]`.
    public init(url: String, timeout: Duration = .seconds(2)) throws(ConfigurationError) {
        let form = "expected http://HOST:PORT, e.g. http://127.0.0.1:8080"
        guard let parsed = URLComponents(string: url), parsed.scheme == "http", let host = parsed.host, !host.isEmpty,
              parsed.path.isEmpty || parsed.path == "/", parsed.query == nil
        else {
            let https = url.lowercased().hasPrefix("https:")
            throw ConfigurationError(
                source: "--url", value: url, isNot: https ? "supported (top reads plain HTTP only)" : "a service URL",
                form: form)
        }
        self.url = url
        self.host = host
        self.port = parsed.port ?? 80
        self.timeout = timeout
    }

    /// `--interval`: a duration above zero (default 1 s).
    public static func interval(_ text: String?) throws(ConfigurationError) -> Duration {
        guard let text else { return .seconds(1) }
        return try ValueFormat.duration(example: "1s", aboveZero: true).value(of: text, from: "--interval")
    }

    /// Reads both documents now; throws when the URL does not answer a unicache `/stats` (asked first, so that
    /// another service is told apart before `/metrics` is asked).
    public func snapshot() throws(HealthcheckError) -> TopSnapshot {
        let stats = try HealthcheckClient(host: host, port: port, path: "/stats", timeout: timeout)
            .get(accept: "application/json")
        guard stats.status == 200,
              let parsed = TopSnapshot(statsJSON: stats.body, metricsText: "", at: .now), parsed.isUnicacheStats
        else {
            let answer = stats.status == 200 ? "a document that is not unicache's" : "status \(stats.status)"
            throw .io("GET /stats answered \(answer): is \(url) a unicache service?")
        }
        let metrics = try HealthcheckClient(host: host, port: port, path: "/metrics", timeout: timeout)
            .get(accept: "text/plain")
        guard metrics.status == 200 else { throw .io("GET /metrics answered status \(metrics.status)") }
        return TopSnapshot(stats: parsed.stats, metrics: MetricsText(String(decoding: metrics.body, as: UTF8.self)), at: .now)
    }
}
