import Clocks
import Foundation

/// Where `unicache top` reads a running service: `GET /stats` (JSON) and `GET /metrics`, over the healthcheck's
/// small socket client (plain HTTP).
public struct TopSource: Sendable {
    public let url: String
    let host: String
    let port: Int
    let timeout: Duration

    /// `url` as the user gave it (shown in the frame's title), and where it points.
    public init(url: String, host: String, port: Int, timeout: Duration = .seconds(2)) {
        self.url = url
        self.host = host
        self.port = port
        self.timeout = timeout
    }

    /// Reads both documents now, stamped with a reading of `elapsed` (the command's clock); throws when the URL does
    /// not answer a unicache `/stats` (asked first, so that another service is told apart before `/metrics` is asked).
    public func snapshot(on elapsed: Elapsed) throws(HealthcheckError) -> TopSnapshot {
        let stats = try HealthcheckClient(host: host, port: port, path: "/stats", timeout: timeout)
            .get(accept: "application/json")
        guard stats.status == 200,
              let parsed = TopSnapshot(statsJSON: stats.body, metricsText: "", at: elapsed.now()),
              parsed.isUnicacheStats
        else {
            let answer = stats.status == 200 ? "a document that is not unicache's" : "status \(stats.status)"
            throw .io("GET /stats answered \(answer): is \(url) a unicache service?")
        }
        let metrics = try HealthcheckClient(host: host, port: port, path: "/metrics", timeout: timeout)
            .get(accept: "text/plain")
        guard metrics.status == 200 else { throw .io("GET /metrics answered status \(metrics.status)") }
        let text = MetricsText(String(decoding: metrics.body, as: UTF8.self))
        return TopSnapshot(stats: parsed.stats, metrics: text, at: elapsed.now())
    }
}
