#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif

/// The time of day as a `Date`: every expiry, day boundary and token time (`exp`, `nbf`, `iat`) is read from one,
/// injected so that tests move time instead of sleeping. Durations, deadlines and pauses are not wall-clock time:
/// they are read from a monotonic `any Clock<Duration>` (see `Elapsed`).
public protocol WallClock: Sendable {
    func now() -> Date
}

/// The system's real time.
public struct SystemWallClock: WallClock {
    public init() {}
    public func now() -> Date { Date() }
}
