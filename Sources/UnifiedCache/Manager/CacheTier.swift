/// The tier a value was served from.
public enum CacheTier: String, Sendable, Equatable {
    case memory
    case disk
    /// The fleet's shared tier (Redis).
    case shared
}
