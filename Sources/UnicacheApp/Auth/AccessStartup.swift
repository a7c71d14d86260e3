import Foundation
import Access
import AsyncHTTPClient
import Clocks
import Logging
import Settings
import UpstreamHTTP

/// Builds the service's access control (CONTRACT §8) before it listens: a JWKS that cannot be read or fetched,
/// or holds no usable key, is a start-up error naming `--jwt-jwks`.
enum AccessStartup {
    static func accessControl(
        _ settings: AccessSettings, adminToken: String?, client: HTTPClient, timeout: Duration, host: String,
        wallClock: any WallClock, clock: any Clock<Duration>, logger: Logger
    ) async throws -> AccessControl {
        var source: (any JWKSSource)?
        if settings.mode == .jwt, let jwks = settings.jwks {
            source = settings.jwksIsURL
                ? HTTPJWKSSource(url: jwks, client: client, timeout: timeout) : FileJWKSSource(path: jwks)
        }
        let access: AccessControl
        do {
            access = try await AccessControl(
                settings: settings, source: source, adminToken: adminToken, wallClock: wallClock, clock: clock,
                logger: logger)
        } catch {
            throw ConfigurationError(message: error.description)
        }
        logger.info("access mode \(settings.mode.rawValue)", metadata: metadata(settings, keys: access.snapshot.keys))
        for warning in warnings(settings, host: host) { logger.warning("\(warning)") }
        return access
    }

    /// What an operator should know about a JWT set-up that works but is weaker than it could be (CONTRACT §8.9).
    static func warnings(_ settings: AccessSettings, host: String = "127.0.0.1") -> [String] {
        if settings.mode == .protected, !isLoopback(host.trimmingCharacters(in: CharacterSet(charactersIn: "[]"))) {
            // CONTRACT §11.4: bound to a network address, protected mode still serves user data to loopback only.
            return [
                "protected mode on \(host): only loopback clients (this machine) will be served user data and admin "
                    + "endpoints; clients of other machines get 403. To serve them, start with \(AccessSettings.jwtFlags) "
                    + "(or --auth none behind a gateway that authenticates)"
            ]
        }
        guard settings.mode == .jwt else { return [] }
        var warnings: [String] = []
        if settings.audience == nil {
            warnings.append(
                "--jwt-audience any: tokens minted for any other API of the same issuer (ID tokens included) are "
                    + "accepted too; name this service's audience to refuse them")
        }
        if let jwks = settings.jwks, let host = plainHTTPHost(jwks), !isLoopback(host) {
            warnings.append(
                "--jwt-jwks: the JWKS is fetched over plain http:// from \(host): whoever is on the network path can "
                    + "substitute keys and mint tokens; use https://")
        }
        return warnings
    }

    /// The host of an `http://` URL (not `https://`), without user information or port.
    private static func plainHTTPHost(_ url: String) -> String? {
        guard url.lowercased().hasPrefix("http://") else { return nil }
        var rest = url.dropFirst("http://".count)
        rest = rest.prefix { $0 != "/" && $0 != "?" && $0 != "#" }
        if let at = rest.lastIndex(of: "@") { rest = rest[rest.index(after: at)...] }
        if rest.hasPrefix("["), let close = rest.firstIndex(of: "]") {
            return String(rest[rest.index(after: rest.startIndex)..<close])
        }
        return String(rest.prefix { $0 != ":" })
    }

    /// `localhost`, 127.0.0.0/8 and `::1`.
    private static func isLoopback(_ host: String) -> Bool {
        let lowered = host.lowercased()
        if lowered == "localhost" || lowered == "::1" || lowered.hasSuffix(".localhost") { return true }
        let octets = lowered.split(separator: ".", omittingEmptySubsequences: false)
        return octets.count == 4 && octets[0] == "127" && octets.allSatisfy { UInt8($0) != nil }
    }

    /// What the start-up line shows: the mode and, with JWT, where keys come from (a URL without its query).
    private static func metadata(_ settings: AccessSettings, keys: Int) -> Logger.Metadata {
        switch settings.mode {
        case .protected:
            return [
                "auth": "protected",
                "note": "only loopback clients may read user data; to serve others: \(AccessSettings.jwtFlags)",
            ]
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
