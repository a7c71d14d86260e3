import ArgumentParser
import Tools

/// The flags of `unicache healthcheck`: where the service listens (same flags and variables as `serve`).
public struct HealthcheckOptions: ParsableArguments, Sendable {
    @Option(name: .customLong("host"), help: "The service's bind address; 0.0.0.0 checks 127.0.0.1 (env UNICACHE_HOST, default 127.0.0.1).")
    public var host: String?

    @Option(name: .customLong("port"), help: "The service's port (env UNICACHE_PORT, default 8080).")
    public var port: String?

    @Option(name: .customLong("timeout"), help: "Give up after this long: ms, s, m, h, d (default 2s).")
    public var timeout: String?

    @Option(name: .customLong("tls-cert"), help: "The service's --tls-cert: check over HTTPS, accepting only this certificate (env UNICACHE_TLS_CERT, default none: HTTP).")
    package var tlsCert: String?

    public init() {}

    /// The client for `GET /healthz` on the configured address.
    public func client(environment: [String: String]) throws(ConfigurationError) -> HealthcheckClient {
        let resolver = SettingResolver(environment: environment)
        let defaults = ServerSettings()
        return HealthcheckClient(
            host: try resolver.value(host, flag: "--host", default: defaults.host, format: .host),
            port: try resolver.value(port, flag: "--port", default: defaults.port, format: .portToCheck),
            timeout: try timeout.map { text throws(ConfigurationError) in
                try ValueFormat.duration(example: "2s", aboveZero: true).value(of: text, from: "--timeout")
            } ?? .seconds(2),
            tls: try Self.tls(tlsCert, resolver: resolver))
    }

    /// `--tls-cert`: the certificate the service shows (its leaf is pinned, see `HealthcheckTLS`).
    static func tls(_ flagValue: String?, resolver: SettingResolver) throws(ConfigurationError) -> HealthcheckTLS? {
        guard let setting = resolver.text(flag: flagValue, named: "--tls-cert") else { return nil }
        let form = "expected the PEM certificate chain the service runs with"
        guard let tls = HealthcheckTLS(certificateChainPEM: try ServeOptions.pemFile(setting, form: form)) else {
            throw ConfigurationError(
                message: "\(setting.source): \(ConfigurationError.quoted(setting.text)) holds no PEM certificate (\(form))")
        }
        return tls
    }
}
