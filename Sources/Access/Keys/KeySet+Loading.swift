import Foundation
import JWTKit

/// A JWKS that yields no key set, in words that name no key material.
public struct KeySetError: Error, Sendable, Equatable, CustomStringConvertible {
    public let description: String

    public init(_ description: String) {
        self.description = description
    }
}

extension KeySet {
    /// The algorithms of CONTRACT §8.2 by key type and curve. HMAC (`oct`) keys fit none: never a secret.
    static func algorithms(kty: String?, crv: String?) -> [String] {
        switch (kty, crv) {
        case ("RSA", _): return ["RS256", "PS256"]
        case ("EC", "P-256"): return ["ES256"]
        case ("EC", "P-384"): return ["ES384"]
        case ("OKP", "Ed25519"): return ["EdDSA"]
        default: return []
        }
    }

    /// Builds the set from a JWKS document: keys for signatures (`use` absent or `sig`) of an accepted type and
    /// curve, with their `alg` (when named) among the ones that fit; the others are skipped.
    static func load(_ document: [UInt8], generation: Int) async throws(KeySetError) -> KeySet {
        guard let set = JSONValue.object(document), case .array(let entries)? = set["keys"] else {
            throw KeySetError("the JWKS is not a JWK Set (a JSON object with a \"keys\" array)")
        }
        var keys: [Key] = []
        for case .object(let jwk) in entries {
            if let key = await usableKey(jwk) { keys.append(key) }
        }
        guard !keys.isEmpty else {
            throw KeySetError("the JWKS holds no usable key (RS256, PS256, ES256, ES384 or EdDSA public keys for signatures)")
        }
        return KeySet(keys: keys, generation: generation, document: document)
    }

    private static func usableKey(_ jwk: [String: JSONValue]) async -> Key? {
        if let use = jwk["use"], use != .string("sig") { return nil }
        var fitting = algorithms(kty: jwk["kty"]?.string, crv: jwk["crv"]?.string)
        if let named = jwk["alg"] {
            guard let name = named.string, fitting.contains(name) else { return nil }
            fitting = [name]
        }
        // Only the public members go to jwt-kit: a private exponent in a published JWKS is never used to sign.
        var members = jwk.filter { ["kty", "crv", "x", "y", "n", "e"].contains($0.key) }
        members["kid"] = .string("k")
        var built: [String: any JWTAlgorithm] = [:]
        for name in fitting {
            members["alg"] = .string(name)
            if let algorithm = await jwtKitAlgorithm(members, name: name) { built[name] = algorithm }
        }
        guard !built.isEmpty else { return nil }
        return Key(id: jwk["kid"]?.string, algorithms: built)
    }

    /// jwt-kit's verifier for one JWK and one algorithm, from a collection that holds only this key (so its
    /// fallback to a default key can pick no other).
    private static func jwtKitAlgorithm(_ members: [String: JSONValue], name: String) async -> (any JWTAlgorithm)? {
        do {
            let json = String(decoding: try JSONEncoder().encode(JSONValue.object(members)), as: UTF8.self)
            let collection = JWTKeyCollection()
            try await collection.add(jwk: JWK(json: json))
            let algorithm = try await collection.getKey(for: JWKIdentifier(string: "k"), alg: name)
            return algorithm.name == name ? algorithm : nil
        } catch {
            return nil
        }
    }
}
