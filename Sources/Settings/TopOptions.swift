import Foundation
import Tools

/// The values of `unicache top`'s flags: the service's URL (and its certificate for HTTPS) and the time between frames.
public enum TopOptions {
    /// `--url` (or `UNICACHE_TOP_URL`): `http://HOST[:PORT][/]`, or `https://…` with `--tls-cert` (or
    /// `UNICACHE_TLS_CERT`, the service's own variable), whose leaf is pinned as `unicache healthcheck` pins it. The
    /// default is `http://127.0.0.1:8080`, `https://` when a certificate is given.
    public static func source(
        url flagURL: String?, tlsCert: String?, environment: [String: String]
    ) throws(ConfigurationError) -> TopSource {
        let resolver = SettingResolver(environment: environment)
        let certificate = resolver.text(flag: tlsCert, named: "--tls-cert")
        let given = flagURL.map { ($0, "--url") } ?? resolver.environmentValue("UNICACHE_TOP_URL").map { ($0, "UNICACHE_TOP_URL") }
        let (url, source) = given ?? ((certificate == nil ? "http" : "https") + "://127.0.0.1:8080", "--url")
        guard let parsed = URLComponents(string: url), let scheme = parsed.scheme?.lowercased(),
              scheme == "http" || scheme == "https", let host = parsed.host, !host.isEmpty,
              parsed.path.isEmpty || parsed.path == "/", parsed.query == nil
        else {
            throw ConfigurationError(
                source: source, value: url, isNot: "a service URL",
                form: "expected http://HOST:PORT, or https://HOST:PORT with --tls-cert, e.g. http://127.0.0.1:8080")
        }
        var tls: HealthcheckTLS?
        if scheme == "https" {
            guard certificate != nil else {
                throw ConfigurationError(
                    source: source, value: url, isNot: "readable without the service's certificate",
                    form: "pass --tls-cert FILE (or UNICACHE_TLS_CERT), the certificate the service serves")
            }
            tls = try HealthcheckOptions.tls(tlsCert, resolver: resolver)
        } else if let tlsCert {
            // The service's variable may be set for the service beside a plain URL; the flag is meant for this URL.
            throw ConfigurationError(
                source: "--tls-cert", value: tlsCert, isNot: "used for an http:// URL",
                form: "give the service's URL as https://HOST:PORT")
        }
        return TopSource(url: url, host: host, port: parsed.port ?? (scheme == "https" ? 443 : 80), tls: tls)
    }

    /// `--interval`: a duration above zero (default 1 s).
    public static func interval(_ text: String?) throws(ConfigurationError) -> Duration {
        guard let text else { return .seconds(1) }
        return try ValueFormat.duration(example: "1s", aboveZero: true).value(of: text, from: "--interval")
    }
}
