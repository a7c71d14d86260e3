import Access
import AsyncHTTPClient
import Logging

/// Builds the service's access control (CONTRACT §8) before it listens: a JWKS that cannot be read or fetched,
/// or holds no usable key, is a start-up error naming `--jwt-jwks`.
enum AccessStartup {
    static func accessControl(
        _ settings: AccessSettings, adminToken: String?, client: HTTPClient, timeout: Duration, logger: Logger
    ) async throws -> AccessControl {
        var source: (any JWKSSource)?
        if settings.mode == .jwt, let jwks = settings.jwks {
            source = settings.jwksIsURL
                ? HTTPJWKSSource(url: jwks, client: client, timeout: timeout) : FileJWKSSource(path: jwks)
        }
        let access: AccessControl
        do {
            access = try await AccessControl(settings: settings, source: source, adminToken: adminToken, logger: logger)
        } catch {
            throw ConfigurationError(message: error.description)
        }
        logger.info("access mode \(settings.mode.rawValue)", metadata: metadata(settings, keys: access.snapshot.keys))
        return access
    }

    /// What the start-up line shows: the mode and, with JWT, where keys come from (a URL without its query).
    private static func metadata(_ settings: AccessSettings, keys: Int) -> Logger.Metadata {
        switch settings.mode {
        case .protected:
            return ["auth": "protected", "note": "only loopback clients may read user data; see --auth"]
        case .none:
            return ["auth": "none", "note": "no token is asked of anyone"]
        case .jwt:
            var metadata: Logger.Metadata = [
                "auth": "jwt", "keys": "\(keys)", "userClaim": "\(settings.userClaim)",
                "leeway": "\(settings.leeway)",
                "jwks": "\(settings.jwksIsURL ? "url" : "file")",
            ]
            if let issuer = settings.issuer { metadata["issuer"] = "\(issuer)" }
            if let audience = settings.audience { metadata["audience"] = "\(audience)" }
            return metadata
        }
    }
}
