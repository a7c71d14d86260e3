import Clocks
import Foundation

/// Where `unicache top` reads a running service: `GET /stats` (JSON) and `GET /metrics`, over the healthcheck's
/// small socket client (plain HTTP, or HTTPS pinning the service's certificate).
public struct TopSource: Sendable {
    public let url: String
    let host: String
    let port: Int
    let timeout: Duration
    package let tls: HealthcheckTLS?

    /// `url` as the user gave it (shown in the frame's title), and where it points.
    public init(url: String, host: String, port: Int, timeout: Duration = .seconds(2), tls: HealthcheckTLS? = nil) {
        self.url = url
        self.host = host
        self.port = port
        self.timeout = timeout
        self.tls = tls
    }

    /// Reads both documents now, stamped with a reading of `elapsed` (the command's clock); throws when the URL does
    /// not answer a unicache `/stats` (asked first, so that another service is told apart before `/metrics` is asked).
    public func snapshot(on elapsed: Elapsed) throws(HealthcheckError) -> TopSnapshot {
        let stats = try get("/stats", accept: "application/json")
        guard stats.status == 200,
              let parsed = TopSnapshot(statsJSON: stats.body, metricsText: "", at: elapsed.now()),
              parsed.isUnicacheStats
        else {
            let answer = stats.status == 200 ? "a document that is not unicache's" : "status \(stats.status)"
            throw .io("GET /stats answered \(answer): is \(url) a unicache service?")
        }
        let metrics = try get("/metrics", accept: "text/plain")
        guard metrics.status == 200 else { throw .io("GET /metrics answered status \(metrics.status)") }
        let text = MetricsText(String(decoding: metrics.body, as: UTF8.self))
        return TopSnapshot(stats: parsed.stats, metrics: text, at: elapsed.now())
    }

    private func get(_ path: String, accept: String) throws(HealthcheckError) -> (status: Int, body: [UInt8]) {
        do {
            return try HealthcheckClient(host: host, port: port, path: path, timeout: timeout, tls: tls).get(accept: accept)
        } catch .speaksTLS, .closedWithoutAnswer {
            // The healthcheck's words name its flag alone; top's URL must change too.
            throw .io(
                "no HTTP answer, as an HTTPS port gives plain HTTP: if the service has --tls-cert, use --url "
                    + "https://HOST:PORT and pass the same --tls-cert FILE (or UNICACHE_TLS_CERT)")
        }
    }
}
