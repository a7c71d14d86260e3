import Crypto
import Foundation

/// Compact JWS tokens made by the tests: well-formed and signed, or hostile.
public enum TokenMinter {
    /// `header` defaults to `{"alg": key.alg, "kid": key.kid}`; claims are any JSON values.
    public static func mint(_ key: SigningKey, claims: [String: Any], header: [String: Any]? = nil) -> String {
        var fields: [String: Any] = ["alg": key.alg, "typ": "JWT"]
        if let kid = key.kid { fields["kid"] = kid }
        let input = signingInput(header: header ?? fields, claims: claims)
        return input + "." + b64(key.sign(Array(input.utf8)))
    }

    /// Signs a header and claims given as JSON text, byte for byte (repeated members, escapes: what a hostile
    /// issuer or a buggy library could write).
    public static func mint(_ key: SigningKey, headerJSON: String, claimsJSON: String) -> String {
        let input = b64(Array(headerJSON.utf8)) + "." + b64(Array(claimsJSON.utf8))
        return input + "." + b64(key.sign(Array(input.utf8)))
    }

    public static func signingInput(header: [String: Any], claims: [String: Any]) -> String {
        b64(try! JSONSerialization.data(withJSONObject: header, options: [.sortedKeys])) + "."
            + b64(try! JSONSerialization.data(withJSONObject: claims, options: [.sortedKeys]))
    }

    /// `alg: none`, no signature.
    public static func unsigned(claims: [String: Any], kid: String?) -> String {
        var header: [String: Any] = ["alg": "none"]
        if let kid { header["kid"] = kid }
        return signingInput(header: header, claims: claims) + "."
    }

    /// HS256 with `secret` as the HMAC key (the RS/HS confusion attack uses the public key's bytes).
    public static func hs256(claims: [String: Any], kid: String?, secret: [UInt8]) -> String {
        var header: [String: Any] = ["alg": "HS256"]
        if let kid { header["kid"] = kid }
        let input = signingInput(header: header, claims: claims)
        let mac = HMAC<SHA256>.authenticationCode(for: Array(input.utf8), using: SymmetricKey(data: secret))
        return input + "." + b64(Array(mac))
    }
}

/// Claims valid at `now` for `user`, with extra members.
public func claims(user: String = "alice", now: Double = TestClock.start, lifetime: Double = 600, _ extra: [String: Any] = [:])
    -> [String: Any]
{
    ["sub": user, "exp": now + lifetime, "iat": now].merging(extra) { _, new in new }
}
