import Crypto
import CryptoExtras
import Foundation

/// A real private key of one of the accepted algorithms, made by the test, with its public JWK.
public struct SigningKey: Sendable {
    public enum Kind: Sendable {
        case rsa(_RSA.Signing.PrivateKey, pss: Bool)
        case p256(P256.Signing.PrivateKey)
        case p384(P384.Signing.PrivateKey)
        case ed25519(Curve25519.Signing.PrivateKey)
    }

    public let kind: Kind
    public let kid: String?

    public init(kind: Kind, kid: String?) {
        self.kind = kind
        self.kid = kid
    }

    public static func rs256(kid: String? = "rs") -> SigningKey {
        SigningKey(kind: .rsa(try! _RSA.Signing.PrivateKey(keySize: .bits2048), pss: false), kid: kid)
    }

    public static func ps256(kid: String? = "ps") -> SigningKey {
        SigningKey(kind: .rsa(try! _RSA.Signing.PrivateKey(keySize: .bits2048), pss: true), kid: kid)
    }

    public static func es256(kid: String? = "es256") -> SigningKey { SigningKey(kind: .p256(P256.Signing.PrivateKey()), kid: kid) }
    public static func es384(kid: String? = "es384") -> SigningKey { SigningKey(kind: .p384(P384.Signing.PrivateKey()), kid: kid) }
    public static func ed25519(kid: String? = "ed") -> SigningKey {
        SigningKey(kind: .ed25519(Curve25519.Signing.PrivateKey()), kid: kid)
    }

    /// One key per accepted algorithm (RSA keys take a moment to make: made once per process).
    public static let all: [SigningKey] = [.rs256(), .ps256(), .es256(), .es384(), .ed25519()]

    public var alg: String {
        switch kind {
        case .rsa(_, let pss): pss ? "PS256" : "RS256"
        case .p256: "ES256"
        case .p384: "ES384"
        case .ed25519: "EdDSA"
        }
    }

    public func with(kid: String?) -> SigningKey { SigningKey(kind: kind, kid: kid) }

    public func sign(_ input: [UInt8]) -> [UInt8] {
        switch kind {
        case .rsa(let key, let pss):
            Array(try! key.signature(for: input, padding: pss ? .PSS : .insecurePKCS1v1_5).rawRepresentation)
        case .p256(let key): Array(try! key.signature(for: input).rawRepresentation)
        case .p384(let key): Array(try! key.signature(for: input).rawRepresentation)
        case .ed25519(let key): Array(try! key.signature(for: input))
        }
    }

    /// The public JWK as a JSON object; `alg` named when asked.
    public func jwk(namingAlg: Bool = false, extra: [String: String] = [:]) -> [String: String] {
        var members: [String: String]
        switch kind {
        case .rsa(let key, _):
            let primitives = try! key.publicKey.getKeyPrimitives()
            members = ["kty": "RSA", "n": b64(primitives.modulus), "e": b64(primitives.publicExponent)]
        case .p256(let key):
            let raw = Array(key.publicKey.rawRepresentation)
            members = ["kty": "EC", "crv": "P-256", "x": b64(raw[..<32]), "y": b64(raw[32...])]
        case .p384(let key):
            let raw = Array(key.publicKey.rawRepresentation)
            members = ["kty": "EC", "crv": "P-384", "x": b64(raw[..<48]), "y": b64(raw[48...])]
        case .ed25519(let key):
            members = ["kty": "OKP", "crv": "Ed25519", "x": b64(key.publicKey.rawRepresentation)]
        }
        if let kid { members["kid"] = kid }
        if namingAlg { members["alg"] = alg }
        return members.merging(extra) { _, new in new }
    }

    /// The bytes an attacker would use as an HMAC secret: the public key as published.
    public var publicKeyBytes: [UInt8] {
        switch kind {
        case .rsa(let key, _): Array(key.publicKey.pemRepresentation.utf8)
        case .p256(let key): Array(key.publicKey.rawRepresentation)
        case .p384(let key): Array(key.publicKey.rawRepresentation)
        case .ed25519(let key): Array(key.publicKey.rawRepresentation)
        }
    }
}

public func b64(_ bytes: some DataProtocol) -> String {
    Data(bytes).base64EncodedString().replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        .replacingOccurrences(of: "=", with: "")
}

/// A JWKS document holding these JWK objects.
public func jwks(_ keys: [[String: String]]) -> [UInt8] {
    Array(try! JSONSerialization.data(withJSONObject: ["keys": keys], options: [.sortedKeys]))
}
