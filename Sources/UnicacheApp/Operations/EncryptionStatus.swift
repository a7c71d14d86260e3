/// Whether values at rest are sealed and under which key (CONTRACT §9.5): what `/stats` and the rekey route may
/// know of the key ring — its primary's ID, never a key.
package struct EncryptionStatus: Sendable, Equatable {
    /// The primary key's ID; `nil` without a key ring.
    public var primaryKey: String?

    public init(primaryKey: String? = nil) {
        self.primaryKey = primaryKey
    }

    public var enabled: Bool { primaryKey != nil }
}
