import Foundation
import Tools

/// The values of `unicache top`'s flags: the service's URL and the time between frames.
public enum TopOptions {
    /// `--url` (or `UNICACHE_TOP_URL`): `http://HOST[:PORT][/]`.
    public static func source(url: String) throws(ConfigurationError) -> TopSource {
        let form = "expected http://HOST:PORT, e.g. http://127.0.0.1:8080"
        guard let parsed = URLComponents(string: url), parsed.scheme == "http", let host = parsed.host, !host.isEmpty,
              parsed.path.isEmpty || parsed.path == "/", parsed.query == nil
        else {
            let https = url.lowercased().hasPrefix("https:")
            throw ConfigurationError(
                source: "--url", value: url, isNot: https ? "supported (top reads plain HTTP only)" : "a service URL",
                form: form)
        }
        return TopSource(url: url, host: host, port: parsed.port ?? 80)
    }

    /// `--interval`: a duration above zero (default 1 s).
    public static func interval(_ text: String?) throws(ConfigurationError) -> Duration {
        guard let text else { return .seconds(1) }
        return try ValueFormat.duration(example: "1s", aboveZero: true).value(of: text, from: "--interval")
    }
}
