/// Why a raw `put` was not acknowledged.
public enum PutError: Error, Sendable, Equatable {
    /// The second tier (disk) could not write the entry; nothing is stored under its key, unless `leftover` says
    /// what of it the tiers could not remove afterwards (the previous value's file, the shared tier's copy).
    case notStored(reason: String, leftover: InvalidationIncomplete? = nil)
    /// With neither a disk tier nor a shared tier, the entry costs more than the memory tier's whole byte budget
    /// (`cost` and `limitBytes` in bytes, as `--memory-limit` counts them): it could never be held, so it is refused
    /// before anything changes (a previous value of its key stays).
    case largerThanMemory(cost: Int, limitBytes: Int)
    /// The shared tier cannot be asked, so the fleet would not see the value; nothing is stored.
    case sharedTierUnavailable(SharedTierUnavailable)
}
