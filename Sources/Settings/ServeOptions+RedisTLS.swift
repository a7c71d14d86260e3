import NIOCore
import Redis

extension ServeOptions {
    /// `--redis-tls-ca`, `--redis-tls-server-name`, `--redis-tls-cert` and `--redis-tls-key` (CONTRACT §10.1) applied
    /// to a `rediss://` endpoint: each file read as start-up would use it (the key refused, like the key ring, when
    /// its group or others may read it), so that a wrong one stops start-up naming its flag. Given without a
    /// `rediss://` URL, they stop start-up too: plain TCP would silently ignore them.
    static func redisTLS(
        _ endpoint: RedisEndpoint?, ca: String?, serverName: String?, certificate: String?, key: String?,
        resolver: SettingResolver
    ) throws(ConfigurationError) -> RedisEndpoint? {
        let settings = [
            resolver.text(flag: ca, named: "--redis-tls-ca"),
            resolver.text(flag: serverName, named: "--redis-tls-server-name"),
            resolver.text(flag: certificate, named: "--redis-tls-cert"),
            resolver.text(flag: key, named: "--redis-tls-key"),
        ]
        guard var endpoint, endpoint.tls != nil else {
            if let given = settings.compactMap({ $0 }).first {
                throw ConfigurationError(
                    message: "\(given.source): needs a rediss:// --redis URL (TLS to Redis), or drop \(given.source)")
            }
            return endpoint
        }
        let (caSetting, nameSetting, certificateSetting, keySetting) = (settings[0], settings[1], settings[2], settings[3])
        var options = RedisTLSOptions()
        if let caSetting {
            _ = try pemFile(caSetting, form: "expected a PEM bundle of the CA certificates that issued Redis's certificate")
            options.caFile = caSetting.text
        }
        if let nameSetting {
            let name = nameSetting.text.trimmingWhitespace()
            guard RedisEndpoint.Address.isValidHost(name), (try? SocketAddress(ipAddress: name, port: 0)) == nil else {
                throw ConfigurationError(
                    message: "\(nameSetting.source): \(name.escapedForLog) is not a host name (the name Redis's certificate gives, e.g. redis.internal; an address is not a name)")
            }
            options.serverName = name
        }
        let pair = "set both --redis-tls-cert and --redis-tls-key (PEM files), or neither"
        switch (certificateSetting, keySetting) {
        case (nil, nil):
            break
        case (let given?, nil):
            throw ConfigurationError(message: "\(given.source): given without --redis-tls-key (\(pair))")
        case (nil, let given?):
            throw ConfigurationError(message: "\(given.source): given without --redis-tls-cert (\(pair))")
        case (let certificate?, let key?):
            _ = try pemFile(certificate, form: "expected the client's PEM certificate chain, leaf first")
            _ = try secretPEMFile(key, form: "expected the client certificate's unencrypted PEM private key")
            options.certificateFile = certificate.text
            options.keyFile = key.text
        }
        do {
            try options.validate()
        } catch {
            let source = [certificateSetting, caSetting].compactMap { $0?.source }.first ?? "--redis"
            throw ConfigurationError(message: "\(source): \(error)")
        }
        endpoint.tls = options
        return endpoint
    }
}
