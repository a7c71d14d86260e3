/// How the service decides who may read what (CONTRACT §8): `--auth` and the `--jwt-*` flags.
public struct AccessSettings: Sendable, Equatable {
    public enum Mode: String, Sendable, Equatable, CaseIterable {
        /// No `--auth`: loopback peers only for §3 and §4.
        case protected
        /// `--auth none`: no token asked of anyone.
        case none
        /// `--auth jwt`: a bearer JWT for every §3 and §4 request.
        case jwt
    }

    public var mode: Mode
    /// `--jwt-jwks`: a file path or an `http(s)://` URL; required by `.jwt`.
    public var jwks: String?
    /// `--jwt-jwks-refresh`: how often a JWKS URL is fetched again.
    public var jwksRefresh: Duration
    /// `--jwt-issuer`: when set, `iss` must equal it.
    public var issuer: String?
    /// `--jwt-audience`: `aud` must contain it; `nil` only after `--jwt-audience any` (or without `--auth jwt`).
    public var audience: String?
    /// `--jwt-user-claim`: the claim naming the token's user.
    public var userClaim: String
    /// `--jwt-leeway`: clock skew allowed for `exp`, `nbf`, `iat`.
    public var leeway: Duration

    /// `--jwt-audience any`: the explicit opt-out of the audience check (a start-up warning says what it accepts).
    public static let anyAudience = "any"
    /// Everything `--auth jwt` needs, as a message that names the fix says it (CONTRACT §11.6: the whole fix).
    public static let jwtFlags = "--auth jwt --jwt-jwks FILE|URL --jwt-audience AUDIENCE"
    /// `jwtFlags` as environment variables.
    package static let jwtVariables = "UNICACHE_AUTH=jwt, UNICACHE_JWT_JWKS, UNICACHE_JWT_AUDIENCE"
    public static let defaultRefresh = Duration.seconds(600)
    public static let defaultLeeway = Duration.seconds(60)

    public init(
        mode: Mode = .protected, jwks: String? = nil, jwksRefresh: Duration = defaultRefresh, issuer: String? = nil,
        audience: String? = nil, userClaim: String = "sub", leeway: Duration = defaultLeeway
    ) {
        self.mode = mode
        self.jwks = jwks
        self.jwksRefresh = jwksRefresh
        self.issuer = issuer
        self.audience = audience
        self.userClaim = userClaim
        self.leeway = leeway
    }

    /// Whether `jwks` names a URL (fetched) rather than a file (read).
    public var jwksIsURL: Bool {
        guard let jwks else { return false }
        let lowered = jwks.lowercased()
        return lowered.hasPrefix("http://") || lowered.hasPrefix("https://")
    }
}
