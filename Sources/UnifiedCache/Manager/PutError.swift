/// Why a raw `put` was not acknowledged.
public enum PutError: Error, Sendable, Equatable {
    /// The second tier (disk) could not write the entry; nothing is stored under its key, unless `leftover` says
    /// what of it the tiers could not remove afterwards (the previous value's file, the shared tier's copy).
    case notStored(reason: String, leftover: InvalidationIncomplete? = nil)
    /// The shared tier cannot be asked, so the fleet would not see the value; nothing is stored.
    case sharedTierUnavailable(SharedTierUnavailable)
}
