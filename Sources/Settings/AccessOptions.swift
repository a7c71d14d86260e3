import ArgumentParser

/// The flags of CONTRACT §8 (who may read what), grouped into `serve`'s flags.
public struct AccessOptions: ParsableArguments, Sendable {
    @Option(name: .customLong("auth"), help: ArgumentHelp("none, or jwt: a bearer JWT for every user-data and admin request (env UNICACHE_AUTH, default unset: protected mode, loopback clients only).", valueName: "mode"))
    public var auth: String?

    @Option(name: .customLong("jwt-jwks"), help: ArgumentHelp("The verification keys as a JWK Set: a file (re-read when it changes) or an http(s) URL (env UNICACHE_JWT_JWKS; required by --auth jwt).", valueName: "file|url"))
    public var jwks: String?

    @Option(name: .customLong("jwt-jwks-refresh"), help: ArgumentHelp("How often a JWKS URL is fetched again (env UNICACHE_JWT_JWKS_REFRESH, default 10m).", valueName: "duration"))
    public var jwksRefresh: String?

    @Option(name: .customLong("jwt-issuer"), help: ArgumentHelp("When set, a token's iss must equal it (env UNICACHE_JWT_ISSUER, default none).", valueName: "issuer"))
    public var issuer: String?

    @Option(name: .customLong("jwt-audience"), help: ArgumentHelp("The audience a token's aud must contain; required by --auth jwt, or any to accept every audience (env UNICACHE_JWT_AUDIENCE).", valueName: "audience|any"))
    public var audience: String?

    @Option(name: .customLong("jwt-user-claim"), help: ArgumentHelp("The claim naming a token's user (env UNICACHE_JWT_USER_CLAIM, default sub).", valueName: "claim"))
    public var userClaim: String?

    @Option(name: .customLong("jwt-leeway"), help: ArgumentHelp("Clock skew allowed for exp, nbf and iat (env UNICACHE_JWT_LEEWAY, default 60s).", valueName: "duration"))
    public var leeway: String?

    public init() {}
}
