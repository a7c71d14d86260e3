import JWTKit

/// Verifies a compact JWS against a key set (CONTRACT §8.2), synchronously: the key is chosen by `kid` and
/// must fit the token's `alg`; times are checked against the injected clock with the leeway.
struct TokenVerifier: Sendable {
    static let acceptedAlgorithms: Set<String> = ["RS256", "PS256", "ES256", "ES384", "EdDSA"]
    /// Longer than any token we expect (an RS256 token with a few claims is under 1 KiB).
    static let maximumLength = 8192

    let issuer: String?
    let audience: String?
    let userClaim: String
    let leeway: Double

    func verify(_ token: String, keys: KeySet, now: Double) -> Result<VerifiedToken, TokenRejection> {
        do throws(TokenRejection) {
            return .success(try verified(token, keys: keys, now: now))
        } catch {
            return .failure(error)
        }
    }

    private func verified(_ token: String, keys: KeySet, now: Double) throws(TokenRejection) -> VerifiedToken {
        let bytes = Array(token.utf8)
        guard bytes.count <= Self.maximumLength else { throw .invalid("token too long") }
        let parts = bytes.split(separator: UInt8(ascii: "."), omittingEmptySubsequences: false)
        guard parts.count == 3 else { throw .invalid("not a compact JWS") }
        guard let headerBytes = Base64URL.decode(parts[0]) else { throw .invalid("malformed header") }
        guard !DuplicateMembers.found(in: headerBytes) else { throw .invalid("a header member is repeated") }
        guard let header = JSONValue.object(headerBytes) else { throw .invalid("malformed header") }
        let algorithm = try algorithm(header, keys: keys)
        guard !parts[2].isEmpty else { throw .invalid("unsigned token") }
        guard let signature = Base64URL.decode(parts[2]) else { throw .invalid("malformed signature") }
        let signingInput = bytes[..<(parts[0].count + 1 + parts[1].count)]
        guard (try? algorithm.verify(signature, signs: signingInput)) == true else { throw .invalid("bad signature") }
        guard let payloadBytes = Base64URL.decode(parts[1]) else { throw .invalid("malformed claims") }
        guard !DuplicateMembers.found(in: payloadBytes) else { throw .invalid("a claim is repeated") }
        guard let claims = JSONValue.object(payloadBytes) else { throw .invalid("malformed claims") }
        return try grant(claims, now: now)
    }

    /// The verifier for the token's `alg` from the key its `kid` names. `jku`, `x5u`, `jwk` and `x5c` are
    /// never read: the key comes from the configured set only.
    private func algorithm(_ header: [String: JSONValue], keys: KeySet) throws(TokenRejection) -> any JWTAlgorithm {
        guard let alg = header["alg"]?.string else { throw .invalid("no alg") }
        guard alg.lowercased() != "none" else { throw .invalid("unsigned token (alg none)") }
        guard !alg.hasPrefix("HS") else { throw .invalid("HMAC algorithms are not accepted") }
        guard Self.acceptedAlgorithms.contains(alg) else { throw .invalid("algorithm not accepted") }
        // RFC 7515 §4.1.11: an extension we do not understand must be rejected.
        guard header["crit"] == nil else { throw .invalid("critical header not understood") }
        let key: KeySet.Key
        switch header["kid"] {
        case nil:
            guard let single = keys.single else { throw .invalid("no kid, and the key set holds several keys") }
            key = single
        case .string(let kid)?:
            guard let named = keys.byID[kid] else { throw .unknownKey }
            key = named
        default:
            throw .invalid("malformed kid")
        }
        guard let algorithm = key.algorithms[alg] else { throw .invalid("the key does not fit the algorithm") }
        return algorithm
    }

    /// Times, issuer and audience, then what the token grants.
    private func grant(_ claims: [String: JSONValue], now: Double) throws(TokenRejection) -> VerifiedToken {
        // As `nbf` and `iat`: a missing `exp` and one that is no NumericDate (`"exp": "1700000000"`) told apart.
        guard let given = claims["exp"] else { throw .invalid("no exp") }
        guard let exp = given.number else { throw .invalid("malformed exp") }
        guard now < exp + leeway else { throw .expired }
        if let nbf = claims["nbf"] {
            guard let nbf = nbf.number else { throw .invalid("malformed nbf") }
            guard nbf <= now + leeway else { throw .invalid("not valid yet (nbf)") }
        }
        if let iat = claims["iat"] {
            guard let iat = iat.number else { throw .invalid("malformed iat") }
            guard iat <= now + leeway else { throw .invalid("issued in the future (iat)") }
        }
        // Byte equality (CONTRACT §8.9): `String ==` would take canonically equivalent text for the same.
        if let issuer, !BytewiseEquality.matches(claims["iss"]?.string, issuer) { throw .invalid("wrong issuer") }
        if let audience, !(claims["aud"]?.strings ?? []).contains(where: { BytewiseEquality.equal($0, audience) }) {
            throw .invalid("wrong audience")
        }
        let scopes = Self.scopes(claims)
        return VerifiedToken(
            user: claims[userClaim]?.string,
            canReadAll: scopes.contains { BytewiseEquality.equal($0, VerifiedToken.readScope) },
            isAdmin: scopes.contains { BytewiseEquality.equal($0, VerifiedToken.adminScope) }, acceptedUntil: exp + leeway)
    }

    /// `scope` (a space-separated string, RFC 8693) and `scp` (an array, or a string).
    static func scopes(_ claims: [String: JSONValue]) -> Set<String> {
        var scopes: Set<String> = []
        if let scope = claims["scope"]?.string { scopes.formUnion(scope.split(separator: " ").map(String.init)) }
        if let scp = claims["scp"] {
            if let list = scp.string { scopes.formUnion(list.split(separator: " ").map(String.init)) }
            else { scopes.formUnion(scp.strings ?? []) }
        }
        return scopes
    }
}
