import HTTPRouting

/// Why a request was refused: the `auth.denied` reasons of `/stats` (CONTRACT §8.8).
public enum DenialReason: String, Sendable, CaseIterable {
    /// No bearer token where one is needed.
    case missing
    /// A malformed, unsigned, wrongly signed or not-yet-valid token, a wrong `iss`/`aud`, an unknown `kid`.
    case invalid
    /// A token past its `exp` (and the leeway).
    case expired
    /// A valid token of another user, or without the scope.
    case forbidden
    /// A non-loopback peer in protected mode.
    case protected
}

/// The answers of CONTRACT §8.4 (RFC 6750 §3): problem+json, with the `WWW-Authenticate` challenge.
enum Denial {
    static let realm = "Bearer realm=\"unicache\""

    static func missing() -> Response {
        Problem(
            type: Problem.typeURI("token-required"), status: 401,
            detail: "A bearer token is required: Authorization: Bearer TOKEN.",
            headers: ["WWW-Authenticate": realm]
        ).response
    }

    /// `description` is a short reason of ours (never the token or anything copied from it).
    static func invalid(_ description: String) -> Response {
        Problem(
            type: Problem.typeURI("invalid-token"), status: 401, detail: "The bearer token is not accepted: \(description).",
            headers: ["WWW-Authenticate": "\(realm), error=\"invalid_token\", error_description=\"\(description)\""]
        ).response
    }

    /// `scope`: the scope that would have allowed the request.
    static func forbidden(_ description: String, scope: String) -> Response {
        Problem(
            type: Problem.typeURI("insufficient-scope"), status: 403, detail: "The bearer token does not allow this: \(description).",
            headers: [
                "WWW-Authenticate":
                    "\(realm), error=\"insufficient_scope\", error_description=\"\(description)\", scope=\"\(scope)\""
            ]
        ).response
    }

    /// Protected mode (Redis's protected mode is the model): says how to open the service.
    static func protected() -> Response {
        Problem(
            type: Problem.typeURI("protected-mode"), status: 403,
            detail: "unicache is in protected mode: only clients on this machine (loopback) may read user data or use "
                + "admin endpoints. To serve other machines, start it with \(AccessSettings.jwtFlags) "
                + "(\(AccessSettings.jwtVariables)) so that each request proves whose data it may read, or with "
                + "--auth none (UNICACHE_AUTH=none) to let anyone who can reach the port read everything."
        ).response
    }
}
