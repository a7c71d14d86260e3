import Settings
import Foundation
import UnifiedCache

/// The raw keys the read-through routes own (CONTRACT §14.3), from the catalog's key shapes.
extension ResourceTable {
    /// The raw keys the read-through routes own: each key's part before `{user}` (one per metric for
    /// `health.metrics`), followed by a user. A raw PUT may not take one (409), and erasure of a user removes every
    /// entry under one that names the user.
    static let userKeys = UserKeys(
        prefixes: ResourceCatalog.keyShapes.values.sorted().flatMap { shape -> [String] in
            let prefix = String(shape[..<(shape.range(of: "{user}")?.lowerBound ?? shape.endIndex)])
            return prefix.contains("{metric}") ? ResourceCatalog.metrics.map { prefix.replacingOccurrences(of: "{metric}", with: $0) } : [prefix]
        })
}
