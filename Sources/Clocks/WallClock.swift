#if canImport(FoundationEssentials)
import FoundationEssentials
#else
import Foundation
#endif
#if canImport(Glibc)
import Glibc
#elseif canImport(Musl)
import Musl
#elseif canImport(Darwin)
import Darwin
#endif

/// The time of day as a `Date`: every expiry, day boundary and token time (`exp`, `nbf`, `iat`) is read from one,
/// injected so that tests move time instead of sleeping. Durations, deadlines and pauses are not wall-clock time:
/// they are read from a monotonic `any Clock<Duration>` (see `Elapsed`).
public protocol WallClock: Sendable {
    func now() -> Date
}

/// The system's real time: `clock_gettime(CLOCK_REALTIME)`, as `Date()` reads it, with the same arithmetic. Read
/// here rather than through `Date()`, which takes the 1970 offset from a lazily initialised static of Foundation's
/// (a `swift_once` check on every read; the service reads the wall clock on every request).
public struct SystemWallClock: WallClock {
    public init() {}

    public func now() -> Date {
        var time = timespec()
        clock_gettime(CLOCK_REALTIME, &time)
        return Date(
            timeIntervalSinceReferenceDate: Double(time.tv_sec) - Self.secondsFrom1970ToReferenceDate
                + 1.0E-9 * Double(time.tv_nsec))
    }

    /// Seconds from 1970-01-01 to 2001-01-01 (`Date.timeIntervalBetween1970AndReferenceDate`).
    private static var secondsFrom1970ToReferenceDate: Double { 978_307_200 }
}
