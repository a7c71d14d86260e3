extension UnifiedCacheManager {
    /// Re-seals the second tier's entries under the key ring's primary (CONTRACT §9.3); the memory tier holds
    /// nothing at rest.
    public func rekeyLocal() async -> RekeyReport {
        await secondTier?.rekey() ?? RekeyReport()
    }

    /// Re-seals the shared tier's entries under the key ring's primary; throws when it cannot be asked.
    public func rekeyShared() async throws(SharedTierUnavailable) -> RekeyReport {
        guard let shared else { return RekeyReport() }
        return try await shared.rekey()
    }
}
