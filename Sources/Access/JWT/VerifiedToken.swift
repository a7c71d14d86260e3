/// What a verified token grants (its signature, times, issuer and audience checked): all the decision needs.
struct VerifiedToken: Sendable, Equatable {
    /// The user claim's value (`--jwt-user-claim`), when it is a string.
    let user: String?
    /// Scope `unicache:read`: every user's §3 data.
    let canReadAll: Bool
    /// Scope `unicache:admin`: the §4 endpoints.
    let isAdmin: Bool
    /// `exp` plus the leeway: the token is accepted until then.
    let acceptedUntil: Double

    static let readScope = "unicache:read"
    static let adminScope = "unicache:admin"
}

/// Why a token was not accepted. The descriptions are ours and short: nothing of the token is echoed.
enum TokenRejection: Error, Equatable {
    case invalid(String)
    case expired
    /// The token names a `kid` the key set lacks (a URL key set may be fetched again).
    case unknownKey
}
