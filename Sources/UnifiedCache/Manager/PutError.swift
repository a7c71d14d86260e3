/// Why a raw `put` was not acknowledged.
public enum PutError: Error, Sendable, Equatable {
    /// The second tier (disk) could not write the entry; nothing is stored under its key.
    case notStored(reason: String)
    /// The shared tier cannot be asked, so the fleet would not see the value; nothing is stored.
    case sharedTierUnavailable(SharedTierUnavailable)
}
