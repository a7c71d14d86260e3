import JWTKit

/// The usable verification keys of one JWK Set, each bound to the algorithms its type and curve fit.
/// Immutable: a changed JWKS makes a new set with the next generation.
package final class KeySet: Sendable {
    /// One JWK (or several under one `kid`): the algorithms it verifies, each a jwt-kit algorithm built for it.
    struct Key: Sendable {
        let id: String?
        let algorithms: [String: any JWTAlgorithm]
    }

    let byID: [String: Key]
    /// The one key a token without `kid` may use: set only while the JWKS holds exactly one usable key.
    let single: Key?
    /// Usable keys held (`auth.keys`).
    public let count: Int
    /// Counts key sets: remembered tokens verified under an older one are not used.
    let generation: Int
    /// The JWKS document it was built from (a refetch of the same bytes changes nothing).
    let document: [UInt8]

    init(keys: [Key], generation: Int, document: [UInt8]) {
        var byID: [String: Key] = [:]
        for key in keys {
            guard let id = key.id else { continue }
            // Several JWKs under one `kid` (RFC 7517 allows it across key types): each algorithm keeps its own key.
            let merged = byID[id].map { $0.algorithms.merging(key.algorithms) { first, _ in first } } ?? key.algorithms
            byID[id] = Key(id: id, algorithms: merged)
        }
        self.byID = byID
        self.single = keys.count == 1 ? keys[0] : nil
        self.count = keys.count
        self.generation = generation
        self.document = document
    }
}
